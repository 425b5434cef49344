// Over 300 lines on purpose: claiming, handing over, giving up, taking stock after a lapsed
// lease and the sweep all read and change the same three things (the conversations owned, the
// idle ones, and the per-conversation chain that keeps each conversation's steps in order);
// split, each part would need all three handed to it. The SQL is in lane-statements.ts, the
// lease in replica-lease.ts, the grouping in statement-batch.ts.
import type { Pool } from "pg";
import { errorMessage } from "../../core/channel-error.js";
import { conversationKey } from "../../core/conversation/conversation-store.js";
import type { Job } from "../../core/lifecycle/job.js";
import type { Logger } from "../../core/log/logger.js";
import type { JobQueue } from "../queue/job-queue.js";
import type { LaneOwnership, LanePlace } from "../queue/lane-ownership.js";
import { roomIn } from "../service/resume-jobs.js";
import type { PostgresPendingJobStore } from "../state/postgres/postgres-pending-job-store.js";
import type { PostgresSequenceCounter } from "../state/postgres/postgres-sequence-counter.js";
import {
  type Claim,
  type ClaimRequest,
  claimLanes,
  findOrphans,
  forgetDeadReplicas,
  jobsOfLanes,
  jobsOfOwner,
  leaveReplicas,
  notifyOwners,
  type Release,
  releaseLanes,
  sharedBacklogIfReporter,
} from "./lane-statements.js";
import { ReplicaLease } from "./replica-lease.js";
import { createStatementBatch } from "./statement-batch.js";

/** What {@link createReplicaLanes} needs. */
export interface ReplicaLanesOptions {
  readonly url: string;
  readonly pool: Pool;
  readonly jobs: PostgresPendingJobStore;
  readonly sequences: PostgresSequenceCounter;
  /** This process's id among the replicas, [a-z0-9] only (it names a LISTEN channel). */
  readonly replica: string;
  /** See {@link ReplicaLease}: how long others wait before taking over a silent replica's conversations. */
  readonly leaseMs: number;
  readonly logger: Logger;
  /** The channels' job queues, which run what this replica owns. */
  readonly queues: () => ReadonlyMap<string, JobQueue>;
}

/** The replica side of a Node service on Postgres. */
export interface ReplicaLanes {
  /** What each job queue asks where a job runs. */
  readonly ownership: LaneOwnership;
  /** Takes the lease and starts looking for conversations no replica runs. */
  start(): Promise<void>;
  /** After a graceful stop's drain: gives up every conversation and the lease, so others take them at once. */
  leave(): Promise<void>;
  /**
   * The stored unfinished jobs of all replicas, per channel, when this replica is the one that
   * reports what they share (the live one with the lowest id), else undefined. Refreshed by
   * the sweep every few seconds.
   */
  sharedBacklog(): ReadonlyMap<string, number> | undefined;
}

/** Sweeps between two looks for dead replicas' leftovers. */
const FORGET_EVERY = 600;
/** Sweeps between two counts of the shared backlog. */
const COUNT_EVERY = 5;
/** Conversations taken per sweep at most. */
const ORPHANS_PER_SWEEP = 500;

/**
 * Runs each conversation on one replica at a time over Postgres (issue 22). A conversation's
 * runner is the replica named by its `lanes` row: the replica that stores a message claims the
 * conversation when nobody runs it, or tells its live owner (NOTIFY), who loads the job from
 * the store. A replica gives up a conversation whose jobs here are all finished (and their
 * deletes committed) at its next sweep, so that a busy conversation is not claimed and given
 * up for every message. The sweep, every fifth of the lease, also takes conversations with
 * stored jobs and no live runner (a replica killed, a claim that failed), picks up replayed
 * dead letters, and finds jobs of its own conversations that it was not told of (a notification
 * lost with a connection). Claims, notifications and releases of one event-loop turn share one
 * statement each; what one conversation goes through here runs in order, one step at a time.
 */
export function createReplicaLanes(options: ReplicaLanesOptions): ReplicaLanes {
  const { pool, jobs, sequences, replica, logger } = options;
  /** Conversations this replica runs, as far as it knows. */
  const owned = new Set<string>();
  /** Owned conversations with no job here since their last one finished: given up at the next sweep. */
  const idle = new Map<string, string>();
  const chains = new Map<string, Promise<unknown>>();
  let timer: ReturnType<typeof setInterval> | undefined;
  let sweeping = false;
  let sweeps = 0;
  let stopped = false;
  /** While set, no job starts and nothing is claimed: see `rejoin`. */
  let rejoining = false;
  let shared: ReadonlyMap<string, number> | undefined;

  const claim = createStatementBatch<ClaimRequest, Claim>((requests) =>
    claimLanes(pool, replica, lease.mayTakeOver(), requests),
  );
  const notify = createStatementBatch<{ owner: string; conversation: string }, true>(async (notices) => {
    await notifyOwners(pool, notices);
    return notices.map(() => true as const);
  });
  const release = createStatementBatch<string, Release>((conversations) => releaseLanes(pool, replica, conversations));
  const readLane = createStatementBatch<string, Job[]>((conversations) => jobsOfLanes(pool, conversations));

  /** Runs `step` after the steps of the conversation already under way. */
  const serial = <T>(key: string, step: () => Promise<T>): Promise<T> => {
    const previous = chains.get(key) ?? Promise.resolve();
    const next = previous.then(step, step);
    const tail = next.catch(() => undefined);
    chains.set(key, tail);
    void tail.then(() => {
      if (chains.get(key) === tail) chains.delete(key);
    });
    return next;
  };

  const queueOf = (channel: string): JobQueue | undefined => {
    const queue = options.queues().get(channel);
    if (queue === undefined) {
      logger.error("a stored message belongs to a channel that is no longer configured; it stays in Postgres", {
        channel,
      });
    }
    return queue;
  };

  /** The conversation's stored jobs, into its queue (those it holds are skipped); how many were new. */
  const load = async (key: string, channel: string): Promise<number> => {
    const queue = queueOf(channel);
    if (queue === undefined) return 0;
    // A job finished here whose delete has not committed is read again: the queue skips it.
    return queue.restore(await readLane(key));
  };

  /**
   * Records that this replica runs `key`. When it did not before (or the row named another, or
   * none), another may have numbered its replies meanwhile: the claim's last number stands.
   */
  const own = (key: string, answer: Claim): void => {
    if (owned.has(key) && answer.previous === replica) return;
    owned.add(key);
    sequences.prime(key, answer.lastSequence);
  };

  /**
   * Claims a conversation found by a sweep or a notification, and loads its jobs when it is
   * ours. One this replica runs already is only loaded: while its lease holds, nobody took it.
   */
  const take = (key: string, channel: string): Promise<void> =>
    serial(key, async () => {
      if (stopped || rejoining) return;
      idle.delete(key);
      if (!owned.has(key) || !lease.isValid()) {
        const answer = await claim({ conversation: key, channel, jobId: "" });
        if (!answer.mine) {
          owned.delete(key);
          return;
        }
        own(key, answer);
      }
      await load(key, channel);
    });

  const place = (job: Job): Promise<LanePlace> => {
    const { channel } = job.message;
    const key = keyOf(job);
    return serial(key, async (): Promise<LanePlace> => {
      idle.delete(key);
      const answer = await claim({ conversation: key, channel, jobId: job.message.id });
      if (!answer.mine) {
        owned.delete(key);
        if (answer.previous !== null) await notify({ owner: answer.previous, conversation: key });
        return "elsewhere";
      }
      own(key, answer);
      // Jobs stored earlier (by other replicas, or before a takeover) go first.
      const queue = queueOf(channel);
      if (queue !== undefined && answer.before.some((id) => !queue.knows(id))) {
        await load(key, channel);
        return "loaded";
      }
      return "here";
    });
  };

  const released = (key: string, channel: string, removed: Promise<void> | undefined): void => {
    // Once the delete settled. One that failed leaves the job stored (the store tries again):
    // the give-up then finds it and keeps the conversation, and tries again at the next sweep.
    serial(key, async () => {
      await removed?.catch(() => undefined);
      idle.set(key, channel);
    }).catch(() => undefined);
  };

  /**
   * Gives up the idle conversations. One that got a job meanwhile is loaded; one whose only
   * stored jobs finished here (a delete not yet committed) stays idle for the next sweep; one
   * that is no longer this replica's is forgotten.
   */
  const giveUpIdle = async (): Promise<void> => {
    await Promise.allSettled(
      [...idle].map(([key, channel]) =>
        serial(key, async () => {
          if (!idle.has(key)) return;
          idle.delete(key);
          const answer = await release(key);
          if (answer !== "kept") {
            owned.delete(key);
            sequences.forget(key);
          } else if ((await load(key, channel)) === 0) idle.set(key, channel);
        }),
      ),
    );
  };

  /**
   * The lease had run out: other replicas may run some of this one's conversations now. Drop
   * every job not running (they stay stored), forget what this replica owned, and take stock
   * again from the lanes table (the catch-up takes back what is still its own).
   */
  const rejoin = async (): Promise<void> => {
    rejoining = true;
    try {
      await Promise.allSettled([...chains.values()]);
      let dropped = 0;
      for (const queue of options.queues().values()) dropped += queue.forsake();
      for (const key of owned) sequences.forget(key);
      owned.clear();
      idle.clear();
      logger.info("replica taking stock after its lease ran out", { dropped });
    } finally {
      rejoining = false;
    }
    await sweep();
    for (const queue of options.queues().values()) queue.wake();
  };

  const sweep = async (): Promise<void> => {
    if (sweeping || stopped || !lease.isValid()) return;
    sweeping = true;
    try {
      sweeps += 1;
      await giveUpIdle();
      const channels = [...options.queues().keys()];
      const orphans = await findOrphans(pool, lease.mayTakeOver(), channels, ORPHANS_PER_SWEEP);
      await Promise.allSettled(orphans.map((orphan) => take(orphan.conversation, orphan.channel)));
      await catchUp();
      await takeReplayed();
      if (sweeps % COUNT_EVERY === 1) shared = await sharedBacklogIfReporter(pool, replica);
      if (sweeps % FORGET_EVERY === 0) await forgetDeadReplicas(pool);
    } catch (error) {
      logger.warn("cannot look for conversations no replica runs", { error: errorMessage(error) });
    } finally {
      sweeping = false;
    }
  };

  /** Loads the conversations of this replica that have stored jobs it was not told of. */
  const catchUp = async (): Promise<void> => {
    const missed = new Map<string, string>();
    for (const row of await jobsOfOwner(pool, replica)) {
      if (options.queues().get(row.channel)?.knows(row.id) !== true) missed.set(row.conversation, row.channel);
    }
    await Promise.allSettled([...missed].map(([key, channel]) => take(key, channel)));
  };

  /** Dead letters replayed through any replica, as far as the queues have room. */
  const takeReplayed = async (): Promise<void> => {
    const room = (channel: string): number => {
      const queue = options.queues().get(channel);
      return queue === undefined ? Number.POSITIVE_INFINITY : roomIn(queue);
    };
    const replayed = await jobs.takeReplayed(room);
    await Promise.allSettled(
      replayed.map(async (job) => {
        if ((await place(job)) === "here") options.queues().get(job.message.channel)?.restore([job]);
      }),
    );
  };

  const lease = new ReplicaLease({
    url: options.url,
    replica,
    leaseMs: options.leaseMs,
    logger,
    onNotify: (key) => {
      const channel = channelOfKey(key);
      if (channel === undefined || stopped) return;
      take(key, channel).catch((error: unknown) => {
        logger.warn("cannot take a job another replica stored; the next sweep will", { error: errorMessage(error) });
      });
    },
    onConnected: () => {
      void sweep();
    },
    onValidity: (valid) => {
      if (valid) for (const queue of options.queues().values()) queue.wake();
    },
    onLapsed: () => {
      rejoin().catch((error: unknown) => {
        logger.warn("cannot take stock after the lease ran out", { error: errorMessage(error) });
      });
    },
  });

  return {
    ownership: { place, released, mayRun: () => lease.isValid() && !rejoining },
    sharedBacklog: () => shared,
    async start() {
      await lease.start();
      timer = setInterval(() => void sweep(), Math.max(100, Math.floor(options.leaseMs / 5)));
      timer.unref();
      await sweep();
    },
    async leave() {
      // No renewal and no notification from here on: a renewal after the delete would
      // advertise this replica for another lease, and a notification would claim again.
      stopped = true;
      clearInterval(timer);
      await lease.stop();
      await Promise.allSettled([...chains.values()]);
      try {
        await leaveReplicas(pool, replica);
      } catch (error) {
        logger.warn("cannot give up this replica's conversations; others take them when its lease runs out", {
          error: errorMessage(error),
        });
      }
    },
  };
}

function keyOf(job: Job): string {
  return conversationKey(job.message.channel, job.message.message.conversationId);
}

/** The channel of a conversation key (`conversationKey`): its length comes first. */
function channelOfKey(key: string): string | undefined {
  const colon = key.indexOf(":");
  const length = Number(key.slice(0, colon));
  if (colon < 1 || !Number.isInteger(length)) return undefined;
  return key.slice(colon + 1, colon + 1 + length);
}
