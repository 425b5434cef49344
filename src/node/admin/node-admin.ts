import type { AdminDeps } from "../../core/admin/admin-routes.js";
import type { Clock } from "../../core/clock.js";
import { type Config, DEFAULT_MAX_DEAD_LETTERS } from "../../core/config/config-schema.js";
import { channelName } from "../../core/config/validate-config.js";
import { conversationKey } from "../../core/conversation/conversation-store.js";
import { createAdminDeadLetters } from "../../core/dead-letters/create-admin-dead-letters.js";
import type { DeadLetter } from "../../core/dead-letters/dead-letter.js";
import type { DeadLetterStore } from "../../core/dead-letters/dead-letter-store.js";
import { warnOverBound } from "../../core/dead-letters/keep-dead-letter.js";
import type { Logger } from "../../core/log/logger.js";
import { createTimelineAdmin } from "../../core/timeline/timeline-admin.js";
import type { TimelineRecorder } from "../../core/timeline/timeline-recorder.js";
import type { TimelineStore } from "../../core/timeline/timeline-store.js";
import type { JobQueue } from "../queue/job-queue.js";
import type { ConsoleTally } from "./console-tally.js";
import { createNodeStatus } from "./node-status.js";

/** The admin API of a Node service, and the hook its job queues call on each dead letter. */
export interface NodeAdmin {
  /** What `createApp` mounts; undefined without `admin` in the configuration. */
  readonly deps: AdminDeps | undefined;
  /** Keeps (in memory mode) and bounds the dead letters of the letter's channel. */
  readonly onDeadLetter: (letter: DeadLetter) => unknown;
  /** The console's counts, which every job queue's events go to (counting nothing without `admin`). */
  readonly tally: ConsoleTally;
}

/** What {@link createNodeAdmin} needs. */
export interface NodeAdminOptions {
  readonly config: Config;
  /**
   * Where dead letters are kept for the API, built only when `admin` is on: the state
   * backend's (SQLite with `state_dir`, else memory with replays through the queues).
   */
  readonly deadLetterStore: () => DeadLetterStore;
  /**
   * The state keeps dead letters without `admin` too (SQLite, Postgres: the job queue's store
   * writes them, and `dead-letters` reads them): they are then bounded by the default.
   */
  readonly lettersStored: boolean;
  /**
   * The admin secret in force, asked per request so that a reload's is the one checked (see
   * `readAdminSecret`, which the start and every reload check it with).
   */
  readonly secret: () => string;
  readonly logger: Logger;
  /** Every message's timeline: where the API reads it, and where replays are recorded. */
  readonly timeline: {
    readonly store: TimelineStore;
    readonly recorder: TimelineRecorder;
    readonly clock: Clock;
  };
  /** What `GET /admin/status` reads: the counts, every channel's job queue, the time. */
  readonly status: {
    readonly tally: ConsoleTally;
    readonly queues: ReadonlyMap<string, JobQueue>;
    readonly now: () => number;
    /** With replicas, this one's id, which the console shows. */
    readonly replica?: string | undefined;
  };
}

/**
 * Builds the Node side of the admin API: over SQLite with `state_dir`, else over a list in
 * memory (the only place such letters are kept). Each channel keeps at most
 * `admin.max_dead_letters`: beyond that the oldest go, with a warning that counts them.
 * Without `admin` the memory mode keeps nothing beyond the log line, and a durable state, which
 * keeps every letter its job queue buries, is bounded by {@link DEFAULT_MAX_DEAD_LETTERS}, as the
 * Worker's store is.
 */
export function createNodeAdmin(options: NodeAdminOptions): NodeAdmin {
  const { admin } = options.config;
  const { tally } = options.status;
  if (admin === undefined) {
    const stored = options.lettersStored ? options.deadLetterStore() : undefined;
    const bound = { max: DEFAULT_MAX_DEAD_LETTERS, logger: options.logger };
    return { deps: undefined, onDeadLetter: (letter) => stored && keepWithin(stored, letter, bound), tally };
  }
  const store = options.deadLetterStore();
  const bound = { max: admin.max_dead_letters, logger: options.logger };
  const { timeline } = options;
  return {
    tally,
    deps: {
      secret: options.secret,
      deadLetters: createAdminDeadLetters(
        store,
        { recorder: timeline.recorder, now: () => timeline.clock.now() },
        options.config.channels.map(channelName),
      ),
      timeline: timeline.recorder.on
        ? createTimelineAdmin(
            timeline.store,
            timeline.clock,
            ({ channel, conversationId, id }) => {
              // Queues are by channel; with replicas this one knows only the runs it makes itself.
              const queue = options.status.queues.get(channel);
              return queue?.isRunning(conversationKey(channel, conversationId), id) === true;
            },
            ({ channel, conversationId, id }) =>
              options.status.queues.get(channel)?.aheadOf(conversationKey(channel, conversationId), id),
          )
        : undefined,
      status: createNodeStatus({
        ...options.status,
        deadLetters: store,
        brainsVisible: !options.config.delivery_thread || options.config.observability.metrics,
      }),
    },
    onDeadLetter: (letter) => keepWithin(store, letter, bound),
  };
}

/** Keeps `letter` in `store` within the bound of its channel, warning when older ones went. */
function keepWithin(store: DeadLetterStore, letter: DeadLetter, bound: { max: number; logger: Logger }): unknown {
  const kept = store.keep(letter, bound.max);
  if (kept instanceof Promise) return kept.then((answer) => warnOverBound(answer, letter, bound));
  warnOverBound(kept, letter, bound);
  return undefined;
}
