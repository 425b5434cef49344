import { decodeCursor, encodeCursor } from "../admin/dead-letter-cursor.js";
import type { Clock } from "../clock.js";
import { ACTIVITY_WINDOW_MS, MINUTE_MS } from "./activity-series.js";
import { hasEnded, type MessageStatus } from "./timeline-event.js";
import type { StoredTimeline, TimelineStore } from "./timeline-store.js";
import {
  type ActivityBucketView,
  activityView,
  type MessageSummaryView,
  type MessageTimelineView,
  summaryView,
  timelineView,
  waitingOf,
} from "./timeline-views.js";

/** What `GET /admin/messages` is asked for (the routes check each value). */
export interface MessageQuery {
  readonly channel?: string | undefined;
  readonly conversationId?: string | undefined;
  readonly status?: MessageStatus | undefined;
  readonly since?: number | undefined;
  readonly limit: number;
  /** A `nextCursor` given before. */
  readonly cursor?: string | undefined;
}

/** One page of messages, newest first. */
export interface MessagePage {
  readonly items: readonly MessageSummaryView[];
  readonly nextCursor: string | null;
}

/**
 * The port the admin routes read the timeline through: implemented once over any
 * {@link TimelineStore} by {@link createTimelineAdmin}, and over HTTP by the CLI's client.
 */
export interface TimelineAdmin {
  get(id: string): Promise<MessageTimelineView | undefined>;
  list(query: MessageQuery): Promise<MessagePage>;
  activity(): Promise<{ readonly bucket_seconds: number; readonly buckets: readonly ActivityBucketView[] }>;
}

/** How many earlier messages of a conversation are looked through for the one a message waits behind. */
const AHEAD_SCAN = 50;

/** A message as the runtime that may run it is asked about it. */
export interface RunningSubject {
  readonly channel: string;
  readonly conversationId: string;
  readonly id: string;
}

/**
 * The admin API's timeline over `store`: one pager, one waiting rule, one chart source.
 * `underWay` says whether a message is being run now here (its brain call or a reply's POST
 * under way): a run's events are recorded when it ends. Without it, none is said to be.
 */
export function createTimelineAdmin(
  store: TimelineStore,
  clock: Clock,
  underWay: (subject: RunningSubject) => boolean = () => false,
  /**
   * The message just ahead of a subject in its lane, as the runtime that holds the lane knows it
   * (null: none, it is next); undefined when it does not hold the message, which the timeline
   * then reckons from acceptance times.
   */
  laneAhead: (subject: RunningSubject) => string | null | undefined = () => undefined,
): TimelineAdmin {
  /** The message ahead of a row that has not started: the lane's answer, else the timeline's reckoning. */
  const aheadOf = async (row: StoredTimeline): Promise<string | undefined> => {
    const inLane = laneAhead({ channel: row.channel, conversationId: row.conversationId, id: row.id });
    return inLane === undefined ? messageAhead(store, row) : (inLane ?? undefined);
  };
  return {
    async get(id) {
      const row = await store.one(id);
      if (row === undefined) return undefined;
      if (!hasEnded(row.status) && underWay({ channel: row.channel, conversationId: row.conversationId, id: row.id })) {
        return timelineView(row, waitingOf(row, undefined, true));
      }
      return timelineView(row, waitingOf(row, notStarted(row) ? await aheadOf(row) : undefined));
    },
    async list(query) {
      const position = query.cursor === undefined ? undefined : decodeCursor(query.cursor);
      const rows = await store.page({
        channel: query.channel,
        conversationId: query.conversationId,
        status: query.status,
        since: query.since,
        before: position === undefined ? undefined : { acceptedAt: position.diedAt, id: position.id },
        limit: query.limit + 1,
      });
      const items = rows.slice(0, query.limit);
      const last = items.at(-1);
      return {
        items: items.map(summaryView),
        nextCursor:
          rows.length > query.limit && last !== undefined
            ? encodeCursor({ diedAt: last.acceptedAt, id: last.id })
            : null,
      };
    },
    async activity() {
      const now = clock.now();
      const counts = await store.activity(now - ACTIVITY_WINDOW_MS);
      return { bucket_seconds: MINUTE_MS / 1000, buckets: activityView(counts, now) };
    },
  };
}

/** Not run since it joined its lane: accepted and nothing since, or replayed and nothing since. */
function notStarted(row: StoredTimeline): boolean {
  if (hasEnded(row.status)) return false;
  const last = row.events.at(-1);
  return last === undefined || last.type === "replayed" || row.events.every((event) => event.type === "accepted");
}

/**
 * When a message joined its conversation's lane: a replay puts it at the lane's end, so a
 * replayed message stands where its replay put it, not where its acceptance did.
 */
function joinedAt(row: StoredTimeline): number {
  for (let index = row.events.length - 1; index >= 0; index -= 1) {
    const event = row.events[index];
    if (event?.type === "replayed") return event.at;
  }
  return row.acceptedAt;
}

/**
 * The message `row` waits behind: of its conversation's messages that have not ended, the one
 * that joined the lane last before it did. Only a message accepted before `row` joined can be
 * ahead of it; one among them that has run is read whole, to learn whether a replay moved it.
 */
async function messageAhead(store: TimelineStore, row: StoredTimeline): Promise<string | undefined> {
  const joined = joinedAt(row);
  const earlier = await store.page({
    channel: row.channel,
    conversationId: row.conversationId,
    // A replayed message: everything accepted up to its replay's millisecond.
    before: joined === row.acceptedAt ? { acceptedAt: joined, id: row.id } : { acceptedAt: joined + 1, id: "" },
    limit: AHEAD_SCAN,
  });
  let ahead: { readonly id: string; readonly joined: number } | undefined;
  for (const other of earlier) {
    if (other.id === row.id || hasEnded(other.status)) continue;
    // One never run joined when it was accepted; one that ran may have been replayed since.
    const whole = other.status === "accepted" ? undefined : await store.one(other.id);
    const otherJoined = whole === undefined ? other.acceptedAt : joinedAt(whole);
    if (otherJoined > joined || (otherJoined === joined && other.id > row.id)) continue;
    if (ahead === undefined || otherJoined > ahead.joined) ahead = { id: other.id, joined: otherJoined };
  }
  return ahead?.id;
}
