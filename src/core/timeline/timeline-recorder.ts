import { errorMessage } from "../channel-error.js";
import type { Clock } from "../clock.js";
import { DEFAULT_TIMELINE_MESSAGES_IN_MEMORY, DEFAULT_TIMELINE_MESSAGES_STORED } from "../config/timeline-schema.js";
import type { Logger } from "../log/logger.js";
import type { QueuedMessage } from "../message/inbound-message.js";
import { ACTIVITY_WINDOW_MS } from "./activity-series.js";
import { RecordBatch } from "./record-batch.js";
import type { MessageStatus, TimelineEvent } from "./timeline-event.js";
import type { TimelineStore, TimelineSubject } from "./timeline-store.js";

/** How long, and how much, the timeline keeps (`timeline` in the configuration). */
export interface TimelineRetention {
  /** Messages accepted longer ago than this are forgotten; 0 turns the timeline off. */
  readonly windowMs: number;
  /** At most this many messages are kept, the most recently accepted; 0 turns the timeline off. */
  readonly maxMessages: number;
  /** Whether message and reply text is kept with the events. */
  readonly keepText: boolean;
}

/**
 * Records what happens to each message. Events are gathered in memory and written in batches,
 * so that a message's acceptance and a quick answer become one write and the path of a message
 * never waits for the timeline. The timeline is a record, not a promise: a batch that cannot be
 * written is dropped with a warning, and what was gathered when the process dies is lost.
 */
export interface TimelineRecorder {
  /** False when retention is 0: nothing is recorded, and callers may skip building events. */
  readonly on: boolean;
  /** Whether events carry message and reply text. */
  readonly keepText: boolean;
  /**
   * Adds `events` to `subject`'s timeline; `status` is what they make it, null when unchanged.
   * The array is handed over: it is kept as it is (a store may keep it as the row's events), so a
   * caller must not change or record it again afterwards.
   */
  record(subject: TimelineSubject, events: readonly TimelineEvent[], status: MessageStatus | null): void;
  /** Writes what was gathered; resolves once written (or dropped). */
  flush(): Promise<void>;
  /** Writes what was gathered and stops: no timer is set again, and later records are dropped. */
  close(): Promise<void>;
}

/** A recorder that keeps nothing (timeline off, and tests). */
export const noTimeline: TimelineRecorder = {
  on: false,
  keepText: false,
  record: () => undefined,
  flush: () => Promise.resolve(),
  close: () => Promise.resolve(),
};

/** What a recorder is built from. */
export interface RecorderDeps {
  readonly store: TimelineStore;
  readonly retention: TimelineRetention;
  readonly clock: Clock;
  readonly logger: Logger;
  /** Runs `task` after `ms` (a runtime's timer, which must not keep a process alive). */
  readonly schedule: (task: () => void, ms: number) => void;
}

/**
 * How long events gather before they are written. Short, since under load a batch is grouped
 * and handed to its store on the event loop at once, which a client waiting on that loop feels
 * as a pause that grows with the batch, and what gathers longer outlives young collections; long
 * enough that a quick answer usually shares its acceptance's write (one row write a message).
 */
const FLUSH_MS = 100;
/**
 * Records kept at most between writes (a message makes two or so); beyond it records that
 * change nothing are dropped until a write, and those that settle a message (its outcome, its
 * latency) only beyond twice as many, so that a burst loses calls and attempts before outcomes.
 */
const MAX_RECORDS = 100_000;
/** How often what the retention no longer keeps is forgotten. */
const PRUNE_EVERY_MS = 60_000;

/** The subject of an accepted message's timeline. */
export function subjectOf(queued: QueuedMessage): TimelineSubject {
  return {
    id: queued.id,
    channel: queued.channel,
    conversationId: queued.message.conversationId,
    acceptedAt: queued.receivedAt,
  };
}

/** True when `retention` keeps anything. */
export function timelineIsOn(retention: TimelineRetention): boolean {
  return retention.windowMs > 0 && retention.maxMessages > 0;
}

/** Builds the recorder over `deps.store`, or {@link noTimeline} when the retention is 0. */
export function createTimelineRecorder(deps: RecorderDeps): TimelineRecorder {
  const { store, retention, clock, logger } = deps;
  if (!timelineIsOn(retention)) return noTimeline;
  const batch = new RecordBatch();
  let scheduled = false;
  /** Whether a timer is set to prune while nothing is recorded. */
  let idleTick = false;
  let closed = false;
  let writing: Promise<void> = Promise.resolve();
  let lastPrune = clock.now();
  let dropped = 0;
  /**
   * The messages' writes the store refused since its writes began to fail (a message whose events
   * fell in several batches counts once per batch); undefined while they succeed.
   */
  let lost: number | undefined;

  const scheduleFlush = (): void => {
    if (scheduled || closed) return;
    scheduled = true;
    deps.schedule(() => void flush(), FLUSH_MS);
  };

  const writeGathered = async (): Promise<void> => {
    scheduled = false;
    const { writes, counts } = batch.take();
    const now = clock.now();
    try {
      if (writes.length > 0 || counts.length > 0) {
        await store.write(writes, counts);
        if (lost !== undefined) logger.info("the message timeline is written again", { dropped_writes: lost });
        lost = undefined;
      }
    } catch (error) {
      // Said once while it fails: an unreachable store would otherwise say it ten times a second.
      if (lost === undefined) {
        logger.warn("cannot write the message timeline; its events are not kept until a write succeeds", {
          messages: writes.length,
          error: errorMessage(error),
        });
      }
      lost = (lost ?? 0) + writes.length;
    }
    if (now - lastPrune >= PRUNE_EVERY_MS) {
      lastPrune = now;
      // Its own failure, said as such: the events were written, and the next prune tries again.
      await Promise.resolve()
        .then(() =>
          store.prune({
            before: now - retention.windowMs,
            keep: retention.maxMessages,
            minutesBefore: now - 2 * ACTIVITY_WINDOW_MS,
          }),
        )
        .catch((error: unknown) => {
          logger.warn("cannot prune the message timeline; it keeps more than its retention until a prune succeeds", {
            error: errorMessage(error),
          });
        });
    }
    if (dropped > 0) {
      logger.warn("the message timeline fell behind; events were dropped", { dropped });
      dropped = 0;
    }
    if (!scheduled) armIdle();
  };
  // A service that is quiet, from its start on, still forgets what its retention no longer keeps.
  const armIdle = (): void => {
    if (idleTick || closed) return;
    idleTick = true;
    deps.schedule(() => {
      idleTick = false;
      if (!scheduled && !closed) void flush();
    }, PRUNE_EVERY_MS);
  };

  const flush = (): Promise<void> => {
    writing = writing.then(writeGathered);
    return writing;
  };

  armIdle();
  return {
    on: true,
    keepText: retention.keepText,
    record(subject, events, status) {
      if (closed) return;
      if (batch.size >= MAX_RECORDS && (status === null || batch.size >= 2 * MAX_RECORDS)) {
        dropped += events.length;
        return;
      }
      batch.push(subject, events, status);
      scheduleFlush();
    },
    flush,
    close: async () => {
      closed = true;
      await flush();
    },
  };
}

/**
 * The retention `config.timeline` asks for; `stored` when the backend keeps state beyond the
 * process (SQLite, Postgres, a Durable Object), which sets the larger default bound.
 */
export function timelineRetention(
  timeline: {
    readonly retention_hours: number;
    readonly max_messages?: number | undefined;
    readonly keep_text: boolean;
  },
  stored: boolean,
): TimelineRetention {
  return {
    windowMs: timeline.retention_hours * 3_600_000,
    maxMessages:
      timeline.max_messages ?? (stored ? DEFAULT_TIMELINE_MESSAGES_STORED : DEFAULT_TIMELINE_MESSAGES_IN_MEMORY),
    keepText: timeline.keep_text,
  };
}
