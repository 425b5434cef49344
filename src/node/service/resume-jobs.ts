import { errorMessage } from "../../core/channel-error.js";
import type { Job } from "../../core/lifecycle/job.js";
import type { Logger } from "../../core/log/logger.js";
import type { JobQueue } from "../queue/job-queue.js";
import type { SqliteLaneStore } from "../state/sqlite-lane-store.js";

/** How often a running service looks for replayed dead letters. */
const REPLAY_POLL_MS = 1_000;

/** How many more jobs `queue` holds before it is full (`webhook.buffer_capacity`). */
export function roomIn(queue: JobQueue): number {
  return Math.max(0, queue.capacity - queue.size);
}

/**
 * Step 4, with `state_dir`: the unfinished messages of the last run go back on their queues,
 * and dead letters replayed (from the CLI or the admin API) are picked up while the service
 * runs. Accepted messages all go back, whatever the room: they were accepted. A replayed one
 * is taken only when its channel's queue has room for it, and otherwise waits, stored, for a
 * later poll, so that a replay never fills a queue beyond `webhook.buffer_capacity`. Returns
 * the poll's timer, for the stop to clear.
 */
export function resumeJobs(
  durable: SqliteLaneStore,
  queues: ReadonlyMap<string, JobQueue>,
  logger: Logger,
): ReturnType<typeof setInterval> {
  const restore = (jobs: readonly Job[]): void => {
    for (const job of jobs) {
      const queue = queues.get(job.message.channel);
      if (queue === undefined) {
        logger.error("a stored message belongs to a channel that is no longer configured; it stays in state_dir", {
          message_id: job.message.id,
          channel: job.message.channel,
        });
      } else queue.restore([job]);
    }
  };
  // A channel that is no longer configured has unlimited room: its replays are taken, to be
  // named by the error line above, rather than wait unseen.
  const room = (channel: string): number => {
    const queue = queues.get(channel);
    return queue === undefined ? Number.POSITIVE_INFINITY : roomIn(queue);
  };
  const pending = durable.takePending();
  // Logged when 0 too: silence would not tell "nothing to resume" from "looked in the wrong file".
  logger.info("resumed unfinished messages from state_dir", { count: pending.length });
  restore(pending);
  restore(durable.takeReplayed(room));
  const timer = setInterval(() => {
    try {
      restore(durable.takeReplayed(room));
    } catch (error) {
      // A busy or locked database is retried at the next poll.
      logger.warn("cannot look for replayed dead letters", { error: errorMessage(error) });
    }
  }, REPLAY_POLL_MS);
  timer.unref();
  return timer;
}
