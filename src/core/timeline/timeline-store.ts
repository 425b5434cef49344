import type { MessageStatus, TimelineEvent } from "./timeline-event.js";

/** Which message a timeline write or row is about. */
export interface TimelineSubject {
  readonly id: string;
  readonly channel: string;
  readonly conversationId: string;
  /** Epoch ms the message was accepted: every writer knows it, so any write may create the row. */
  readonly acceptedAt: number;
}

/**
 * New events of one message. `status` is what the latest of them makes it (null: they change
 * nothing, e.g. a run's calls before its settlement), as of `updatedAt`.
 */
export interface TimelineWrite extends TimelineSubject {
  readonly status: MessageStatus | null;
  readonly updatedAt: number;
  readonly events: readonly TimelineEvent[];
}

/** One message's row, without its events. */
export interface TimelineSummary extends TimelineSubject {
  readonly status: MessageStatus;
  readonly updatedAt: number;
}

/** One message's row with its events, oldest first. */
export interface StoredTimeline extends TimelineSummary {
  readonly events: readonly TimelineEvent[];
}

/** Which rows one page of the list holds, newest (by acceptance, then id) first. */
export interface TimelinePageQuery {
  readonly channel?: string | undefined;
  readonly conversationId?: string | undefined;
  readonly status?: MessageStatus | undefined;
  /** Only messages accepted at or after this epoch ms. */
  readonly since?: number | undefined;
  /** The last row of the previous page: only rows after it in the order. */
  readonly before?: { readonly acceptedAt: number; readonly id: string } | undefined;
  /** At most this many. */
  readonly limit: number;
}

/** What a prune forgets. */
export interface TimelinePrune {
  /** Messages accepted before this epoch ms. */
  readonly before: number;
  /** All but this many most recently accepted messages. */
  readonly keep: number;
  /** Minute counts of minutes before this epoch ms. */
  readonly minutesBefore: number;
}

/** A count added to one series (`accepted`, `delivered`, …, or `latency:<bucket>`) of one minute. */
export interface ActivityCount {
  /** Epoch ms of the minute's start. */
  readonly minute: number;
  readonly series: string;
  readonly count: number;
}

/**
 * What a backend stores for the timeline: a row per message with its events appended as they
 * come, and counts per minute. The meaning (statuses, the waiting reason, the charts) is the
 * core's (`timeline-recorder.ts`, `timeline-views.ts`); a store only keeps and finds. Memory,
 * SQLite, Postgres and the conversation Durable Object implement it, and one contract suite
 * holds them to the same behaviour. Methods may answer at once or with a promise.
 */
export interface TimelineStore {
  /**
   * Appends each write's events to its message's row, creating the row when it is new. The
   * row's status becomes the write's when the write has one and is no older than the row's
   * (writers on several replicas may land out of order); `updatedAt` keeps the later. Adds
   * `activity` to the minute counts. The writes are handed over: a store may keep them (and
   * their event arrays) as they are, and the caller neither reads nor changes them again.
   */
  write(writes: readonly TimelineWrite[], activity: readonly ActivityCount[]): void | Promise<void>;
  /** One message's row, or undefined. Events come back oldest first. */
  one(id: string): StoredTimeline | undefined | Promise<StoredTimeline | undefined>;
  /** One page of rows (see {@link TimelinePageQuery}). */
  page(query: TimelinePageQuery): readonly TimelineSummary[] | Promise<readonly TimelineSummary[]>;
  /** Minute counts from `since` (epoch ms) on, in any order. */
  activity(since: number): readonly ActivityCount[] | Promise<readonly ActivityCount[]>;
  /** Forgets what the retention no longer keeps (see {@link TimelinePrune}). */
  prune(limits: TimelinePrune): void | Promise<void>;
}

/** Events sorted by time, keeping the order of writing among equal times. */
export function inTimeOrder(events: readonly TimelineEvent[]): TimelineEvent[] {
  return events
    .map((event, index) => ({ event, index }))
    .sort((a, b) => a.event.at - b.event.at || a.index - b.index)
    .map(({ event }) => event);
}

/** True when `row` comes after `before` in the newest-first order of the list. */
export function isAfter(
  row: { readonly acceptedAt: number; readonly id: string },
  before: TimelinePageQuery["before"],
): boolean {
  if (before === undefined) return true;
  return row.acceptedAt < before.acceptedAt || (row.acceptedAt === before.acceptedAt && row.id < before.id);
}
