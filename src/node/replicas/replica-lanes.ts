import type { Pool } from "pg";
import type { BrainSharing } from "../../core/brain/limits/brain-sharing.js";
import { errorMessage } from "../../core/channel-error.js";
import { channelOfKey, conversationKey } from "../../core/conversation/conversation-store.js";
import type { Job } from "../../core/lifecycle/job.js";
import type { Logger } from "../../core/log/logger.js";
import type { JobQueue } from "../queue/job-queue.js";
import type { LaneOwnership, LanePlace } from "../queue/lane-ownership.js";
import type { PostgresLaneStore } from "../state/postgres/postgres-lane-store.js";
import { createKeyChains } from "./key-chains.js";
import {
  type Claim,
  type ClaimRequest,
  claimLanes,
  jobsOfLanes,
  leaveReplicas,
  notifyOwners,
  type Release,
  releaseLanes,
} from "./lane-statements.js";
import { createReplicaBrains } from "./replica-brains.js";
import { ReplicaLease } from "./replica-lease.js";
import { createReplicaSweep } from "./replica-sweep.js";
import { createStatementBatch } from "./statement-batch.js";

/** What {@link createReplicaLanes} needs. */
export interface ReplicaLanesOptions {
  readonly url: string;
  readonly pool: Pool;
  readonly lanes: PostgresLaneStore;
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
  /** What each job queue asks where a job runs, and under which ticket. */
  readonly ownership: LaneOwnership;
  /** Takes the lease and starts looking for conversations no replica runs. */
  start(): Promise<void>;
  /** After a graceful stop's drain: gives up every conversation and the lease, so others take them at once. */
  leave(): Promise<void>;
  /** This replica's share of the brains' limits, for the consumer's limiters. */
  readonly brains: BrainSharing;
  /**
   * The stored unfinished jobs of all replicas, per channel, when this replica is the one that
   * reports what they share (the live one with the lowest id), else undefined. Refreshed by
   * the sweep every few seconds.
   */
  sharedBacklog(): ReadonlyMap<string, number> | undefined;
}

/**
 * Runs each conversation on one replica at a time over Postgres. A conversation's runner is the
 * replica named by its `lanes` row, under the epoch of the claim that gave it the row: the
 * replica that stores a message claims the conversation when nobody runs it, or tells its live
 * owner (NOTIFY), who loads the job from the store. Every write of a run carries the lane's
 * ticket, and the lane store's fence refuses one whose epoch moved on, so a replica that was
 * paused past its lease writes (and posts) nothing new when it wakes. A replica gives up a
 * conversation whose jobs here are all finished (and their deletes committed) at its next sweep
 * (`replica-sweep.ts`), which also takes conversations no live replica runs. What one
 * conversation goes through here runs in order, one step at a time.
 */
export function createReplicaLanes(options: ReplicaLanesOptions): ReplicaLanes {
  const { pool, lanes, replica, logger } = options;
  /** The conversations this replica runs, as far as it knows, with the epoch of its claim. */
  const owned = new Map<string, number>();
  /** Owned conversations with no job here since their last one finished: given up at the next sweep. */
  const idle = new Map<string, string>();
  let stopped = false;
  /** While set, no job starts and nothing is claimed: see `rejoin`. */
  let rejoining = false;

  const claim = createStatementBatch<ClaimRequest, Claim>((requests) =>
    claimLanes(pool, replica, lease.mayTakeOver(), requests),
  );
  const notify = createStatementBatch<{ owner: string; conversation: string }, true>(async (notices) => {
    await notifyOwners(pool, notices);
    return notices.map(() => true as const);
  });
  const release = createStatementBatch<string, Release>((conversations) => releaseLanes(pool, replica, conversations));
  const readLane = createStatementBatch<string, Job[]>((conversations) => jobsOfLanes(pool, conversations));

  const chains = createKeyChains();
  const serial = <T>(key: string, step: () => Promise<T>): Promise<T> => chains.run(key, step);

  const queueOf = (channel: string): JobQueue | undefined => {
    const queue = options.queues().get(channel);
    if (queue === undefined) {
      logger.error("a stored message belongs to a channel that is no longer configured; it stays in Postgres", {
        channel,
      });
    }
    return queue;
  };

  /** Jobs loaded from the store since start: the first sweep's are what this replica resumed. */
  let loaded = 0;

  /** The conversation's stored jobs, into its queue (those it holds are skipped); how many were new. */
  const load = async (key: string, channel: string): Promise<number> => {
    const queue = queueOf(channel);
    if (queue === undefined) return 0;
    // Read after the claim committed: what a run fenced by the claim stored last is in it.
    const added = queue.restore(await readLane(key));
    loaded += added;
    return added;
  };

  /** Records the ticket a claim gave, and the lane's last number with it. */
  const own = (key: string, answer: Claim): void => {
    owned.set(key, answer.epoch);
    lanes.primed({ key, epoch: answer.epoch }, answer.lastSequence);
  };

  /** Who this replica took conversations from since the last report, for the takeover line. */
  const takenOver = new Map<string, { conversations: number; jobs: number }>();

  /**
   * Claims a conversation found by a sweep or a notification, and loads its jobs when it is ours.
   * One this replica holds a ticket of is only loaded: while its ticket holds, nobody took it.
   */
  const take = (key: string, channel: string): Promise<void> =>
    serial(key, async () => {
      if (stopped || rejoining) return;
      idle.delete(key);
      if (!owned.has(key)) {
        const answer = await claim({ conversation: key, channel, jobId: "", reclaim: true });
        if (!answer.mine) return;
        own(key, answer);
        const loaded = await load(key, channel);
        if (answer.previous !== null && answer.previous !== replica) {
          const from = takenOver.get(answer.previous) ?? { conversations: 0, jobs: 0 };
          takenOver.set(answer.previous, { conversations: from.conversations + 1, jobs: from.jobs + loaded });
        }
        return;
      }
      await load(key, channel);
    });

  const place = (job: Job): Promise<LanePlace> => {
    const { channel } = job.message;
    const key = conversationKey(channel, job.message.message.conversationId);
    return serial(key, async (): Promise<LanePlace> => {
      idle.delete(key);
      const answer = await claim({ conversation: key, channel, jobId: job.message.id, reclaim: !owned.has(key) });
      if (!answer.mine) {
        owned.delete(key);
        if (answer.previous !== null) await notify({ owner: answer.previous, conversation: key });
        return "elsewhere";
      }
      if (owned.get(key) !== answer.epoch) own(key, answer);
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
      if (owned.has(key)) idle.set(key, channel);
    }).catch(() => undefined);
  };

  const lost = (key: string): void => {
    owned.delete(key);
    idle.delete(key);
  };

  /**
   * The lease had run out: other replicas may run some of this one's conversations now. Drop
   * every job not running (they stay stored), forget every ticket, and take stock again from the
   * lanes table: the sweep claims back what is still this replica's, under new epochs, which
   * fences whatever of its own ran on under the old ones.
   */
  const rejoin = async (): Promise<void> => {
    rejoining = true;
    try {
      await chains.settled();
      let dropped = 0;
      for (const queue of options.queues().values()) dropped += queue.forsake();
      owned.clear();
      idle.clear();
      logger.info("replica taking stock after its lease ran out", { dropped });
    } finally {
      rejoining = false;
    }
    await sweep.run();
    for (const queue of options.queues().values()) queue.wake();
  };

  const brains = createReplicaBrains(pool, replica, logger, () => Date.now());

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
    onPause: (payload) => brains.notified(payload),
    onConnected: () => {
      void sweep.run();
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

  const sweep = createReplicaSweep({
    pool,
    replica,
    logger,
    queues: options.queues,
    lease,
    brains,
    idle,
    isStopped: () => stopped,
    take,
    giveUp: (key, channel) =>
      serial(key, async () => {
        if (!idle.has(key)) return;
        idle.delete(key);
        const answer = await release(key);
        if (answer !== "kept") owned.delete(key);
        else if ((await load(key, channel)) === 0) idle.set(key, channel);
      }),
    reportTakeovers: () => {
      for (const [from, counts] of takenOver) {
        logger.info("took over conversations of another replica", { from, ...counts });
      }
      takenOver.clear();
    },
  });

  return {
    ownership: {
      place,
      ticket: (key) => {
        const epoch = owned.get(key);
        return epoch === undefined ? undefined : { key, epoch };
      },
      released,
      lost,
      mayRun: () => lease.isValid() && !rejoining,
    },
    brains,
    sharedBacklog: () => sweep.sharedBacklog(),
    async start() {
      await lease.start();
      sweep.start();
      await sweep.run();
      // Logged when 0 too, as with state_dir: silence would not tell "nothing to resume" from a fault.
      logger.info("resumed unfinished messages from postgres", { count: loaded });
    },
    async leave() {
      // No renewal and no notification from here on: a renewal after the delete would
      // advertise this replica for another lease, and a notification would claim again.
      stopped = true;
      sweep.stop();
      await lease.stop();
      await chains.settled();
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
