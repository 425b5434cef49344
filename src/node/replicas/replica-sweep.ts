import type { Pool } from "pg";
import { errorMessage } from "../../core/channel-error.js";
import type { Logger } from "../../core/log/logger.js";
import type { JobQueue } from "../queue/job-queue.js";
import type { OwnedLane } from "./lane-loader.js";
import type { IdleLane } from "./owned-lanes.js";
import type { ReplicaBrains } from "./replica-brains.js";
import type { ReplicaLease } from "./replica-lease.js";
import {
  forgetDeadReplicas,
  jobsUpTo,
  lapsedReplicas,
  liveReplicas,
  markSwept,
  orphansOf,
  ownLanes,
  sharedBacklogIfReporter,
  strayLanes,
} from "./sweep-statements.js";

/** Sweeps between two looks for dead replicas' leftovers. */
const FORGET_EVERY = 600;
/** Sweeps between two counts of the shared backlog. */
const COUNT_EVERY = 5;
/** Sweeps between two comparisons of what this replica holds with what the lanes table says it runs. */
const STOCKTAKE_EVERY = 30;
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
  /**
   * Owned conversations with nothing to run here: given up by {@link ReplicaSweepOptions.giveUp}
   * once idle for a lease.
   */
  readonly idle: ReadonlyMap<string, IdleLane>;
  /** Owned conversations with stored jobs waiting for room: read on by {@link ReplicaSweepOptions.readOn}. */
  readonly behind: ReadonlyMap<string, string>;
  /** Conversations whose claim failed: taken by {@link ReplicaSweepOptions.take}. */
  readonly unplaced: ReadonlyMap<string, string>;
  /** Conversations with jobs whose write failed but may be stored: settled by {@link ReplicaSweepOptions.settle}. */
  readonly unsure: ReadonlyMap<string, unknown>;
  /** Claims a conversation of {@link unsure} and runs those of its jobs that are stored. */
  readonly settle: (key: string) => Promise<void>;
  /** What this replica holds of an owned conversation. */
  readonly owned: (key: string) => OwnedLane | undefined;
  readonly isStopped: () => boolean;
  /** Draining: the sweep still keeps the brains' shares and pauses, and does nothing else. */
  readonly isDraining?: () => boolean;
  /**
   * Claims a conversation (unless this replica holds its ticket) and reads its stored jobs; one
   * claimed with none is marked idle.
   */
  readonly take: (key: string, channel: string) => Promise<void>;
  /** Reads on an owned conversation's stored jobs, as far as the queue has room. */
  readonly readOn: (key: string, channel: string) => Promise<void>;
  /** Hands the queue the stored jobs `ids` of an owned conversation that it does not know. */
  readonly readIds: (key: string, channel: string, ids: readonly string[]) => Promise<void>;
  /**
   * Gives up an idle conversation still idle since before `idleBefore` (`performance.now()`), or
   * reads it on when a job was stored meanwhile.
   */
  readonly giveUp: (key: string, channel: string, idleBefore: number) => Promise<void>;
  /** Logs whom conversations were taken over from since the last call. */
  readonly reportTakeovers: () => void;
}

/** The replica's sweep. */
export interface ReplicaSweep {
  /** Sweeps now, unless a sweep is under way or the lease is not valid. */
  run(): Promise<void>;
  /**
   * Compares what this replica holds with what the lanes table says it runs, then sweeps: at
   * start, after its lease ran out, and when its notifications may have been missed.
   */
  stocktake(): Promise<void>;
  /** Sweeps every fifth of the lease from now on. */
  start(): void;
  stop(): void;
  /** The shared backlog per channel when this replica reports it (see `ReplicaLanes.sharedBacklog`). */
  sharedBacklog(): ReadonlyMap<string, number> | undefined;
}

/**
 * The sweep of one replica, every fifth of its lease: it gives up idle conversations, claims
 * again what a failed claim left, takes what replicas whose lease ran out left (through the
 * indexes on a lane's owner and a job's storing replica, never a read of every stored job), reads
 * on conversations that waited for room, counts the shared backlog when it is the replica that
 * reports it, and now and then compares what it holds with the lanes table and lets go of what
 * dead replicas left.
 */
export function createReplicaSweep(options: ReplicaSweepOptions): ReplicaSweep {
  const { pool, replica, lease, logger } = options;
  let sweeping = false;
  let sweeps = 0;
  let timer: ReturnType<typeof setInterval> | undefined;
  let shared: ReadonlyMap<string, number> | undefined;
  let started = false;
  /** A stocktake asked for while a sweep was under way: the next sweep does it. */
  let stocktakeDue = false;

  const sweepMs = (): number => Math.max(100, Math.floor(lease.leaseMs / 5));
  const channels = (): string[] => [...options.queues().keys()];
  const each = async (found: ReadonlyMap<string, string>, step: (key: string, channel: string) => Promise<void>) => {
    await Promise.allSettled([...found].map(([key, channel]) => step(key, channel)));
  };

  /**
   * The idle conversations to give up: those idle since before `before`. A conversation whose
   * messages come in a run is kept between them, since each claim of one given up is a write to
   * its lane row (and a release another); one that went quiet is given up within a lease, and
   * with it the memory it takes here.
   */
  const idleSince = (before: number): Map<string, string> => {
    const due = new Map<string, string>();
    for (const [key, { channel, since }] of options.idle) if (since <= before) due.set(key, channel);
    return due;
  };

  /** What dead replicas left; a lapsed replica with nothing left is not looked at again. */
  const takeOrphans = async (): Promise<void> => {
    // A replica that stopped and said so may be taken over at once; a silent one only by a
    // replica that has been up for a whole lease (see ReplicaLease.mayTakeOver).
    const lapsed = await lapsedReplicas(pool, !lease.mayTakeOver());
    if (lapsed.length === 0) return;
    const orphans = await orphansOf(pool, lapsed, channels(), ORPHANS_PER_SWEEP);
    if (orphans.length === 0) {
      await markSwept(pool, lapsed);
      return;
    }
    await Promise.allSettled(orphans.map((orphan) => options.take(orphan.conversation, orphan.channel)));
  };

  /** Conversations the lanes table says this replica runs with jobs it does not hold. */
  const compare = async (): Promise<void> => {
    const steps: Promise<void>[] = [];
    const held: { conversation: string; channel: string; upTo: number }[] = [];
    for (const row of await ownLanes(pool, replica)) {
      if (row.last === 0) continue;
      const lane = options.owned(row.conversation);
      if (lane === undefined) steps.push(options.take(row.conversation, row.channel));
      else if (row.last > lane.upTo) steps.push(options.readOn(row.conversation, row.channel));
      if (lane !== undefined && lane.upTo > 0) held.push({ ...row, upTo: lane.upTo });
    }
    // A job at or below a lane's position that the queue does not know was missed (see jobsUpTo).
    const channelOf = new Map(held.map((lane) => [lane.conversation, lane.channel]));
    const missed = new Map<string, string[]>();
    for (const job of held.length === 0 ? [] : await jobsUpTo(pool, held)) {
      const channel = channelOf.get(job.conversation) ?? "";
      if (options.queues().get(channel)?.knows(job.id) !== false) continue;
      missed.set(job.conversation, [...(missed.get(job.conversation) ?? []), job.id]);
    }
    for (const [key, ids] of missed) steps.push(options.readIds(key, channelOf.get(key) ?? "", ids));
    if (!started) {
      // Once, at start: a conversation nobody owns that a path no index covers left behind.
      for (const stray of await strayLanes(pool, channels(), ORPHANS_PER_SWEEP)) {
        steps.push(options.take(stray.conversation, stray.channel));
      }
      started = true;
    }
    await Promise.allSettled(steps);
  };

  const sweep = async (stocktaking: boolean): Promise<void> => {
    if (stocktaking) stocktakeDue = true;
    const draining = options.isDraining?.() === true;
    if (sweeping || (options.isStopped() && !draining) || !lease.isValid()) return;
    sweeping = true;
    try {
      sweeps += 1;
      options.brains.live(await liveReplicas(pool), sweepMs());
      await options.brains.publish();
      await options.brains.readPauses();
      if (draining) return;
      const idleBefore = performance.now() - lease.leaseMs;
      await each(idleSince(idleBefore), (key, channel) => options.giveUp(key, channel, idleBefore));
      await each(options.unplaced, options.take);
      await Promise.allSettled([...options.unsure.keys()].map((key) => options.settle(key)));
      await takeOrphans();
      options.reportTakeovers();
      if (stocktakeDue || sweeps % STOCKTAKE_EVERY === 0) {
        // Asked for again should it fail (a database that does not answer yet): the next sweep does it.
        const asked = stocktakeDue;
        stocktakeDue = false;
        await compare().catch((error: unknown) => {
          stocktakeDue ||= asked;
          throw error;
        });
      }
      await each(options.behind, options.readOn);
      if (sweeps % COUNT_EVERY === 1) shared = await sharedBacklogIfReporter(pool, replica);
      if (sweeps % FORGET_EVERY === 0) await forgetDeadReplicas(pool);
    } catch (error) {
      logger.warn("cannot look for conversations no replica runs", { error: errorMessage(error) });
    } finally {
      sweeping = false;
    }
  };

  return {
    run: () => sweep(false),
    stocktake: () => sweep(true),
    start() {
      timer = setInterval(() => void sweep(false), sweepMs());
      timer.unref();
    },
    stop() {
      clearInterval(timer);
    },
    sharedBacklog: () => shared,
  };
}
