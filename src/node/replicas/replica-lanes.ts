import type { Pool } from "pg";
import type { BrainSharing } from "../../core/brain/limits/brain-sharing.js";
import { errorMessage } from "../../core/channel-error.js";
import { channelOfKey, conversationKey } from "../../core/conversation/conversation-store.js";
import type { Logger } from "../../core/log/logger.js";
import type { JobQueue } from "../queue/job-queue.js";
import type { LaneOwnership } from "../queue/lane-ownership.js";
import { readNotice } from "../state/postgres/job-notices.js";
import type { PostgresLaneStore } from "../state/postgres/postgres-lane-store.js";
import { mayHaveCommitted } from "../state/postgres/postgres-state-error.js";
import { createKeyChains } from "./key-chains.js";
import { createLaneArrivals } from "./lane-arrivals.js";
import { createLaneBatches } from "./lane-batches.js";
import { createLaneLoader } from "./lane-loader.js";
import { leaveReplicas } from "./lane-statements.js";
import { OwnedLanes } from "./owned-lanes.js";
import { createReplicaBrains } from "./replica-brains.js";
import { ReplicaLease } from "./replica-lease.js";
import { createReplicaSweep } from "./replica-sweep.js";
import { createSweepClaims, UNSURE_SETTLES_AFTER_MS } from "./sweep-claims.js";

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
  /**
   * A graceful stop began: this replica reads no more jobs into its lanes (the other replicas go
   * on storing messages of its conversations, which would keep its drain from ever ending); what
   * it did not read runs, in order, once {@link leave} gave its conversations up.
   */
  drain(): void;
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
 * owner (NOTIFY) where the job is, and the owner reads what follows what it holds. Every write of
 * a run carries the lane's ticket, and the lane store's fence refuses one whose epoch moved on,
 * so a replica that was paused past its lease writes (and posts) nothing new when it wakes. A
 * replica gives up a conversation whose jobs here are all finished, or that it claimed and found
 * nothing to run in, at a sweep once the conversation has been idle for a lease; the sweep also
 * takes what dead replicas left, and claims the conversations of messages whose write failed but
 * may have been committed. One conversation's steps here run in order, one at a time.
 */
export function createReplicaLanes(options: ReplicaLanesOptions): ReplicaLanes {
  const { pool, lanes, replica, logger } = options;
  const loader = createLaneLoader(pool, options.queues, logger);
  const owned = new OwnedLanes(lanes, loader);
  const { idle, behind, unplaced } = owned;
  let stopped = false;
  /** Set by `drain`: no job is read into the lanes any more, while those held run to their end. */
  let draining = false;
  /** While set, no job starts and nothing is claimed: see `rejoin`. */
  let rejoining = false;

  const { claim, notify, release } = createLaneBatches(pool, replica, () => lease.mayTakeOver());

  const chains = createKeyChains();
  const serial = <T>(key: string, step: () => Promise<T>): Promise<T> => chains.run(key, step);

  const { take, settle } = createSweepClaims({
    replica,
    owned,
    loader,
    claim,
    notify,
    serial,
    halted: () => stopped || rejoining,
  });

  const { noticed, place } = createLaneArrivals({
    owned,
    loader,
    claim,
    notify,
    serial,
    isStopped: () => stopped || draining,
    replica,
    position: (id) => lanes.takePosition(id),
  });

  const released = (key: string, channel: string, removed: Promise<void> | undefined): void => {
    // Once the delete settled. One that failed leaves the job stored (the store tries again):
    // the give-up then finds it and keeps the conversation, and tries again at the next sweep.
    serial(key, async () => {
      await removed?.catch(() => undefined);
      const lane = owned.get(key);
      if (lane === undefined) return;
      if (lane.behind && !draining && (await owned.readOn(key, channel, lane)) > 0) return;
      owned.markIdle(key, channel);
    }).catch(() => undefined);
  };

  const lost = (key: string): void => owned.lost(key);

  // A write under the lane's ticket may commit late (see `SpentTickets`): the lane is given up
  // here, its jobs in memory dropped, and claimed again at the next sweep, under a new epoch.
  lanes.onSpent(({ key, epoch }) => {
    const channel = channelOfKey(key);
    if (channel === undefined) return;
    serial(key, async () => {
      // Spent under an older claim than the one held now: nothing to give up.
      if ((owned.get(key)?.epoch ?? 0) > epoch) return;
      owned.lost(key);
      const dropped = loader.queueOf(channel)?.drop(key) ?? 0;
      unplaced.set(key, channel);
      logger.warn(
        "a write of a conversation failed without postgres saying it was not committed: it is claimed again before more is written",
        {
          channel,
          conversation: key,
          dropped,
        },
      );
    }).catch(() => undefined);
  });

  /** The queue dropped lane `key` (see `LaneOwnership.reread`): its stored jobs are read from the start. */
  const reread = (key: string, channel: string): void => {
    // At once, not in the chain: a job placed meanwhile must not join the empty lane ahead of
    // those stored before it.
    if (!owned.startOver(key, channel)) return;
    serial(key, async () => {
      const lane = owned.get(key);
      if (lane !== undefined) await owned.readOnOrIdle(key, channel, lane);
    }).catch((error: unknown) => {
      logger.warn("cannot read a conversation again; the next sweep will", { error: errorMessage(error) });
    });
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
      logger.info("replica taking stock after its lease ran out", { dropped });
    } finally {
      rejoining = false;
    }
    await sweep.stocktake();
    for (const queue of options.queues().values()) queue.wake();
  };

  // The lease is made below; the brains ask it only once calls come, after the start.
  const brains = createReplicaBrains(
    pool,
    replica,
    logger,
    () => Date.now(),
    () => lease.isValid(),
  );

  const lease = new ReplicaLease({
    url: options.url,
    replica,
    leaseMs: options.leaseMs,
    logger,
    onNotify: (payload) => {
      noticed(readNotice(payload)).catch((error: unknown) => {
        logger.warn("cannot take a job another replica stored; the next sweep will", { error: errorMessage(error) });
      });
    },
    onPause: (payload) => brains.notified(payload),
    onConnected: () => {
      // Notifications may have been missed while the connection was down.
      void sweep.stocktake();
    },
    onValidity: (valid) => {
      if (valid) for (const queue of options.queues().values()) queue.wake();
      else brains.lapsed();
    },
    onLapsed: () => {
      brains.lapsed();
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
    behind,
    unplaced,
    unsure: owned.unsure,
    settle,
    owned: (key) => owned.get(key),
    isStopped: () => stopped || draining,
    isDraining: () => draining && !stopped,
    take,
    readIds: (key, channel, ids) => serial(key, () => owned.readIds(key, channel, ids)),
    readOn: (key, channel) => serial(key, () => owned.readOnHeld(key, channel)),
    giveUp: (key, channel, idleBefore) => serial(key, () => owned.giveUp(key, channel, release, idleBefore)),
    reportTakeovers: () => owned.reportTakeovers(logger),
  });

  return {
    ownership: {
      place,
      ticket: (key) => owned.ticket(key),
      released,
      lost,
      reread,
      mayRun: () => lease.isValid() && !rejoining,
      unsure: (job, error) => {
        // Rolled back: nothing to look for (nor a claim to make of a conversation new to the database).
        if (!mayHaveCommitted(error)) return;
        const { channel } = job.message;
        const key = conversationKey(channel, job.message.message.conversationId);
        // In the conversation's chain, so that a settle under way cannot take the id with it.
        const after = performance.now() + UNSURE_SETTLES_AFTER_MS;
        serial(key, async () => owned.noteUnsure(key, channel, job.message.id, after)).catch(() => undefined);
      },
    },
    brains,
    sharedBacklog: () => sweep.sharedBacklog(),
    async start() {
      await lease.start();
      sweep.start();
      await sweep.stocktake();
      // Logged when 0 too, as with state_dir: silence would not tell "nothing to resume" from a fault.
      logger.info("resumed unfinished messages from postgres", { count: loader.loaded });
    },
    drain() {
      draining = true;
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
