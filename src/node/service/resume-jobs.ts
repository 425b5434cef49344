import type { Logger } from "../../core/log/logger.js";
import type { JobQueue } from "../queue/job-queue.js";
import type { SqliteLaneStore } from "../state/sqlite/sqlite-lane-store.js";

/**
 * Step 4, with `state_dir`: the unfinished messages of the last run go back on their queues,
 * whatever the room: they were accepted. (Replayed dead letters come back through the replay
 * pickup, as far as there is room.)
 */
export function resumeJobs(durable: SqliteLaneStore, queues: ReadonlyMap<string, JobQueue>, logger: Logger): void {
  const pending = durable.takePending();
  // Logged when 0 too: silence would not tell "nothing to resume" from "looked in the wrong file".
  logger.info("resumed unfinished messages from state_dir", { count: pending.length });
  for (const job of pending) {
    const queue = queues.get(job.message.channel);
    if (queue === undefined) {
      logger.error("a stored message belongs to a channel that is no longer configured; it stays in state_dir", {
        message_id: job.message.id,
        channel: job.message.channel,
      });
    } else queue.restore([job]);
  }
}
