import type { Pool } from "pg";
import type { Job } from "../../core/lifecycle/job.js";
import type { Logger } from "../../core/log/logger.js";
import type { JobQueue } from "../queue/job-queue.js";
import { jobsAfter, jobsById, type LaneSlice, type StoredJob } from "./lane-reads.js";
import { createStatementBatch } from "./statement-batch.js";

/** A conversation this replica runs: the epoch of its claim, and how far its stored jobs are held here. */
export interface OwnedLane {
  readonly epoch: number;
  /** The position of the last stored job handed to the queue (0: none yet). */
  upTo: number;
  /** Stored jobs after {@link upTo} wait for room in the queue. */
  behind: boolean;
}

/** Hands a replica's queues the stored jobs of the conversations it runs, within their room. */
export interface LaneLoader {
  /** The channel's queue; stored jobs of a channel no longer configured stay stored, said once per channel. */
  queueOf(channel: string): JobQueue | undefined;
  /** Whether the channel has a queue, without a word about it when it has none. */
  hasQueue(channel: string): boolean;
  /**
   * Reads the jobs of `key` stored after `lane.upTo`, as many as the queue has room for (plus
   * `reserved`: places already counted, the job being placed), and hands them to the queue.
   * Marks the lane behind when more may wait. Returns how many the queue took.
   */
  after(key: string, channel: string, lane: OwnedLane, reserved: number): Promise<number>;
  /**
   * Hands the queue the jobs `ids` of a lane it does not hold, whatever their position (one whose
   * commit came after a later one's), when it has room; otherwise the lane reads them later.
   */
  byId(channel: string, lane: OwnedLane, ids: readonly string[]): Promise<number>;
  /** Jobs handed to the queues since start. */
  readonly loaded: number;
}

/**
 * The loads of a replica, batched per event-loop turn. A load never takes more than the queue's
 * free room, so a takeover of a large backlog, a wake-up on a long conversation or a burst of
 * notifications hold at most `buffer_capacity` jobs in memory, and the rest are read as room
 * frees; and it reads only what follows what the lane holds, so its work does not grow with the
 * backlog.
 */
export function createLaneLoader(pool: Pool, queues: () => ReadonlyMap<string, JobQueue>, logger: Logger): LaneLoader {
  const readAfter = createStatementBatch<LaneSlice, StoredJob[]>((slices) => jobsAfter(pool, slices));
  const readIds = createStatementBatch<string, StoredJob[]>((ids) => jobsById(pool, ids));
  let loaded = 0;
  // Channels gone from the configuration whose stored messages were met: said once each, since
  // every load of one of their conversations meets them again.
  const said = new Set<string>();

  const queueOf = (channel: string): JobQueue | undefined => {
    const queue = queues().get(channel);
    // Configured again (a reload): should it go once more, it is said once more.
    if (queue !== undefined) said.delete(channel);
    else if (!said.has(channel)) {
      said.add(channel);
      logger.error(
        "stored messages belong to a channel that is no longer configured; they stay in Postgres, and are delivered once a channel of that name is configured again",
        { channel },
      );
    }
    return queue;
  };

  // Room each queue's reads under way may fill: a load counts it from its start, so that loads
  // started together (a sweep's takeovers, a burst of notifications) share the room, not each read all of it.
  const reading = new Map<JobQueue, number>();
  const roomOf = (queue: JobQueue, reserved: number): number =>
    Math.max(0, queue.capacity - queue.size - (reading.get(queue) ?? 0)) + reserved;

  /**
   * Hands the queue what fits of `read` now, in order: loads started in one turn (a sweep's
   * takeovers, a burst of notifications) each read up to the room they saw, and the ones that
   * settle last find less. What does not fit stays stored, and the lane reads on from the last
   * job handed. Returns how many the queue took, and whether some were left.
   */
  const handWhatFits = (
    queue: JobQueue,
    lane: OwnedLane,
    read: readonly StoredJob[],
    reserved: number,
  ): { added: number; left: boolean } => {
    const fits = roomOf(queue, reserved);
    if (read.length <= fits) return { added: hand(queue, lane, read), left: false };
    return { added: hand(queue, lane, read.slice(0, fits)), left: true };
  };

  const hand = (queue: JobQueue, lane: OwnedLane, read: readonly StoredJob[]): number => {
    const due = new Map<Job, number | undefined>(read.map((stored) => [stored.job, stored.dueAt]));
    const added = queue.restore(
      read.map((stored) => stored.job),
      (job) => due.get(job),
    );
    for (const stored of read) lane.upTo = Math.max(lane.upTo, stored.seq);
    loaded += added;
    return added;
  };

  return {
    queueOf,
    hasQueue: (channel) => queues().has(channel),
    async after(key, channel, lane, reserved) {
      const queue = queueOf(channel);
      if (queue === undefined) return 0;
      const room = roomOf(queue, reserved);
      if (room === 0) {
        lane.behind = true;
        return 0;
      }
      reading.set(queue, (reading.get(queue) ?? 0) + room);
      let read: StoredJob[];
      try {
        read = await readAfter({ conversation: key, after: lane.upTo, limit: room });
      } finally {
        const left = (reading.get(queue) ?? room) - room;
        if (left > 0) reading.set(queue, left);
        else reading.delete(queue);
      }
      const { added, left } = handWhatFits(queue, lane, read, reserved);
      lane.behind = left || read.length === room;
      return added;
    },
    async byId(channel, lane, ids) {
      const queue = queueOf(channel);
      if (queue === undefined) return 0;
      const unknown = ids.filter((id) => !queue.knows(id));
      if (unknown.length === 0) return 0;
      // Read with the lane's next slice, from the start of the lane (they are below its position),
      // when they do not fit, or when the lane is to be read anyway: one that waits for room, or
      // one read again from its start meanwhile, whose jobs must not be overtaken by these.
      const later = (): number => {
        lane.upTo = 0;
        lane.behind = true;
        return 0;
      };
      if (lane.behind || roomOf(queue, 0) < unknown.length) return later();
      const read = (await Promise.all(unknown.map((id) => readIds(id)))).flat();
      if (lane.behind || roomOf(queue, 0) < read.length) return later();
      return hand(queue, lane, read);
    },
    get loaded() {
      return loaded;
    },
  };
}
