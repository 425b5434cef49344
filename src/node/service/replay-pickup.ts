import { errorMessage } from "../../core/channel-error.js";
import type { Job } from "../../core/lifecycle/job.js";
import { isLaneFenced, type LaneStore } from "../../core/lifecycle/lane-store.js";
import type { Logger } from "../../core/log/logger.js";
import type { JobQueue } from "../queue/job-queue.js";
import type { LanePlace } from "../queue/lane-ownership.js";

/** How often a running service looks for replayed dead letters (another process may have replayed them). */
const REPLAY_POLL_MS = 1_000;

/** How many more jobs `queue` holds before it is full (`webhook.buffer_capacity`). */
export function roomIn(queue: JobQueue): number {
  return Math.max(0, queue.capacity - queue.size);
}

/** What picking up replays works with. */
export interface ReplayPickupOptions {
  readonly lanes: LaneStore;
  readonly queues: ReadonlyMap<string, JobQueue>;
  /** With replicas, where a stored job runs (`LaneOwnership.place`); alone, here. */
  readonly place?: ((job: Job) => Promise<LanePlace>) | undefined;
  /** False while nothing may be taken (a replica whose lease is not known valid); default always. */
  readonly ready?: (() => boolean) | undefined;
  readonly logger: Logger;
}

/** The one way a replayed dead letter gets back to its lane on Node. */
export interface ReplayPickup {
  /** Looks now (a replay was just asked for through this process), besides the poll. */
  poke(): void;
  stop(): void;
}

/**
 * Picks up replayed dead letters on every Node backend, one way: a replay (the admin API, the
 * CLI, another replica) keeps the job in the lane store (`LaneStore.restore`), and this takes
 * them (`takeReplayed`) as far as each channel's queue has room, then hands each to its lane:
 * its queue, or with replicas the replica that runs its conversation. It looks every second and
 * whenever poked; a replay that finds no room waits, kept, for a later look, so that a replay
 * never fills a queue beyond `webhook.buffer_capacity`. The memory store answers at once, so
 * there a poke has put the jobs on their queues by the time it returns.
 */
export function startReplayPickup(options: ReplayPickupOptions): ReplayPickup {
  const { lanes, queues, logger } = options;
  let looking: Promise<void> | undefined;
  let again = false;
  // Undefined once stopped: a stopped pickup looks no more, poked or not.
  let timer: ReturnType<typeof setInterval> | undefined;
  const stop = (): void => {
    clearInterval(timer);
    timer = undefined;
  };

  // A channel that is no longer configured has unlimited room: its replays are taken, to be
  // named by an error line, rather than wait unseen.
  const room = (channel: string): number => {
    const queue = queues.get(channel);
    return queue === undefined ? Number.POSITIVE_INFINITY : roomIn(queue);
  };

  const handOver = (job: Job): void | Promise<void> => {
    const queue = queues.get(job.message.channel);
    if (queue === undefined) {
      logger.error("a replayed message belongs to a channel that is no longer configured; it stays stored", {
        message_id: job.message.id,
        channel: job.message.channel,
      });
      return;
    }
    if (options.place === undefined) {
      queue.restore([job]);
      return;
    }
    return queue.placeTaken(job, options.place);
  };

  const failed = (error: unknown): void => {
    if (isLaneFenced(error)) {
      // Another process holds the state now: it takes the replays, and this one never will.
      logger.error("this process no longer holds the state: it takes no replayed dead letters", {
        error: errorMessage(error),
      });
      stop();
      return;
    }
    // A busy or unreachable store is asked again at the next look.
    logger.warn("cannot look for replayed dead letters", { error: errorMessage(error) });
  };

  const look = (): void => {
    if (timer === undefined || options.ready?.() === false) return;
    if (looking !== undefined) {
      again = true;
      return;
    }
    // With replicas the take is a transaction, and placing a job another: the room it takes is
    // reserved from the moment it is counted, so that new messages cannot take it meanwhile.
    const reserved = new Map<string, number>();
    const reserving = (channel: string, wanted?: number): number => {
      const queue = queues.get(channel);
      if (queue === undefined || options.place === undefined) return room(channel);
      const free = Math.min(roomIn(queue), wanted ?? Number.POSITIVE_INFINITY);
      queue.reserve(free);
      reserved.set(channel, (reserved.get(channel) ?? 0) + free);
      return free;
    };
    const unreserveAll = (): void => {
      for (const [channel, count] of reserved) queues.get(channel)?.unreserve(count);
      reserved.clear();
    };
    let taken: readonly Job[] | Promise<readonly Job[]>;
    try {
      taken = lanes.takeReplayed(reserving);
    } catch (error) {
      unreserveAll();
      failed(error);
      return;
    }
    if (!(taken instanceof Promise)) {
      unreserveAll();
      for (const job of taken) void handOver(job);
      return;
    }
    looking = taken
      .then(
        (jobs) => {
          const placing = jobs.map((job) => {
            const { channel } = job.message;
            reserved.set(channel, (reserved.get(channel) ?? 1) - 1);
            return handOver(job);
          });
          unreserveAll();
          return Promise.allSettled(placing);
        },
        (error: unknown) => {
          unreserveAll();
          throw error;
        },
      )
      .then(() => undefined, failed)
      .finally(() => {
        looking = undefined;
        if (again) {
          again = false;
          look();
        }
      });
  };

  timer = setInterval(look, REPLAY_POLL_MS);
  timer.unref();
  look();
  return { poke: look, stop };
}
