import type { Pool } from "pg";
import { errorMessage } from "../../core/channel-error.js";
import type { Logger } from "../../core/log/logger.js";
import type { JobQueue } from "../queue/job-queue.js";
import {
  findOrphans,
  forgetDeadReplicas,
  jobsOfOwner,
  liveReplicas,
  sharedBacklogIfReporter,
} from "./lane-statements.js";
import type { ReplicaBrains } from "./replica-brains.js";
import type { ReplicaLease } from "./replica-lease.js";

/** Sweeps between two looks for dead replicas' leftovers. */
const FORGET_EVERY = 600;
/** Sweeps between two counts of the shared backlog. */
const COUNT_EVERY = 5;
/** Conversations taken per sweep at most. */
const ORPHANS_PER_SWEEP = 500;

/** What the sweep works with: the replica's lanes and the steps of `replica-lanes.ts`. */
export interface ReplicaSweepOptions {
  readonly pool: Pool;
  readonly replica: string;
  readonly logger: Logger;
  readonly queues: () => ReadonlyMap<string, JobQueue>;
  readonly lease: ReplicaLease;
  /** This replica's share of the brains' limits, and the pauses the others met. */
  readonly brains: ReplicaBrains;
  /** Owned conversations with nothing to run here: given up by {@link ReplicaSweepOptions.giveUp}. */
  readonly idle: ReadonlyMap<string, string>;
  readonly isStopped: () => boolean;
  /** Claims a conversation (unless this replica holds its ticket) and loads its stored jobs. */
  readonly take: (key: string, channel: string) => Promise<void>;
  /** Gives up an idle conversation, or loads it when a job was stored meanwhile. */
  readonly giveUp: (key: string, channel: string) => Promise<void>;
  /** Logs whom conversations were taken over from since the last call. */
  readonly reportTakeovers: () => void;
}

/** The replica's sweep. */
export interface ReplicaSweep {
  /** Sweeps now, unless a sweep is under way or the lease is not valid. */
  run(): Promise<void>;
  /** Sweeps every fifth of the lease from now on. */
  start(): void;
  stop(): void;
  /** The shared backlog per channel when this replica reports it (see `ReplicaLanes.sharedBacklog`). */
  sharedBacklog(): ReadonlyMap<string, number> | undefined;
}

/**
 * The sweep of one replica, every fifth of its lease: it gives up idle conversations, takes
 * conversations with stored jobs and no live runner (a replica killed, a claim that failed),
 * finds jobs of its own conversations that it was not told of (a notification lost with a
 * connection), counts the shared backlog when it is the replica that reports it, and now and
 * then lets go of what dead replicas left.
 */
export function createReplicaSweep(options: ReplicaSweepOptions): ReplicaSweep {
  const { pool, replica, lease, logger } = options;
  let sweeping = false;
  let sweeps = 0;
  let timer: ReturnType<typeof setInterval> | undefined;
  let shared: ReadonlyMap<string, number> | undefined;

  const sweepMs = (): number => Math.max(100, Math.floor(lease.leaseMs / 5));

  /** Loads the conversations of this replica that have stored jobs it was not told of. */
  const catchUp = async (): Promise<void> => {
    const missed = new Map<string, string>();
    for (const row of await jobsOfOwner(pool, replica)) {
      if (options.queues().get(row.channel)?.knows(row.id) !== true) missed.set(row.conversation, row.channel);
    }
    await Promise.allSettled([...missed].map(([key, channel]) => options.take(key, channel)));
  };

  const run = async (): Promise<void> => {
    if (sweeping || options.isStopped() || !lease.isValid()) return;
    sweeping = true;
    try {
      sweeps += 1;
      options.brains.live(await liveReplicas(pool), sweepMs());
      await options.brains.readPauses();
      await Promise.allSettled([...options.idle].map(([key, channel]) => options.giveUp(key, channel)));
      const channels = [...options.queues().keys()];
      const orphans = await findOrphans(pool, lease.mayTakeOver(), channels, ORPHANS_PER_SWEEP);
      await Promise.allSettled(orphans.map((orphan) => options.take(orphan.conversation, orphan.channel)));
      options.reportTakeovers();
      await catchUp();
      if (sweeps % COUNT_EVERY === 1) shared = await sharedBacklogIfReporter(pool, replica);
      if (sweeps % FORGET_EVERY === 0) await forgetDeadReplicas(pool);
    } catch (error) {
      logger.warn("cannot look for conversations no replica runs", { error: errorMessage(error) });
    } finally {
      sweeping = false;
    }
  };

  return {
    run,
    start() {
      timer = setInterval(() => void run(), sweepMs());
      timer.unref();
    },
    stop() {
      clearInterval(timer);
    },
    sharedBacklog: () => shared,
  };
}
