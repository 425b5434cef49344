import { errorMessage } from "../../core/channel-error.js";
import type { Logger } from "../../core/log/logger.js";
import type { JobQueue } from "../queue/job-queue.js";
import type { SqliteLaneStore } from "../state/sqlite/sqlite-lane-store.js";
import { roomIn } from "./replay-pickup.js";

/** Stored jobs read at most per statement. */
const SLICE = 500;
/** How often a resume that waits for room looks again. */
const RETRY_MS = 50;

/** A resume of the last run's unfinished messages, which may go on after the start. */
export interface Resume {
  /** True once every stored job was loaded (or named as belonging to no channel). */
  readonly done: boolean;
  stop(): void;
}

/**
 * Step 4, with `state_dir`: the unfinished messages of the last run go back on their queues in
 * acceptance order, as far as each queue has room (`webhook.buffer_capacity`), so that a resume
 * never holds more in memory than the buffers do, even after the capacity was lowered. While
 * stored messages wait to be loaded, the queues refuse new ones (`buffer_full`): a new message
 * must not run before an older one of its conversation. Usually everything fits at once, before
 * the listeners open. (Replayed dead letters come back through the replay pickup.)
 */
export function startResume(durable: SqliteLaneStore, queues: ReadonlyMap<string, JobQueue>, logger: Logger): Resume {
  let after = 0;
  let loaded = 0;
  let done = false;
  let timer: ReturnType<typeof setTimeout> | undefined;
  const hold = (on: boolean): void => {
    for (const queue of queues.values()) queue.hold(on);
  };

  /** Loads what fits; true once nothing is left. */
  const load = (): boolean => {
    for (;;) {
      let room = 0;
      for (const queue of queues.values()) room += roomIn(queue);
      if (room === 0) return false;
      const rows = durable.readPending(after, Math.min(SLICE, room));
      for (const row of rows) {
        const queue = queues.get(row.job.message.channel);
        if (queue === undefined) {
          logger.error("a stored message belongs to a channel that is no longer configured; it stays in state_dir", {
            message_id: row.job.message.id,
            channel: row.job.message.channel,
          });
        } else if (roomIn(queue) === 0) return false;
        else {
          queue.restore([row.job]);
          loaded += 1;
        }
        after = row.seq;
      }
      if (rows.length < Math.min(SLICE, room)) return true;
    }
  };

  const again = (): void => {
    timer = undefined;
    try {
      if (!load()) {
        timer = setTimeout(again, RETRY_MS);
        return;
      }
    } catch (error) {
      logger.error("cannot read unfinished messages from state_dir; trying again", { error: errorMessage(error) });
      timer = setTimeout(again, RETRY_MS * 20);
      return;
    }
    done = true;
    hold(false);
    logger.info("resumed the rest of the unfinished messages from state_dir", { count: loaded });
  };

  done = load();
  // Logged when 0 too: silence would not tell "nothing to resume" from "looked in the wrong file".
  logger.info("resumed unfinished messages from state_dir", { count: loaded, ...(done ? {} : { more: true }) });
  if (!done) {
    hold(true);
    timer = setTimeout(again, RETRY_MS);
  }
  return {
    get done() {
      return done;
    },
    stop() {
      clearTimeout(timer);
    },
  };
}
