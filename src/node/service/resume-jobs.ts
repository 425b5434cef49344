import { errorMessage } from "../../core/channel-error.js";
import type { Logger } from "../../core/log/logger.js";
import type { JobQueue } from "../queue/job-queue.js";
import type { SqliteLaneStore } from "../state/sqlite/sqlite-lane-store.js";
import { roomIn } from "./replay-pickup.js";

/** Stored jobs read at most per statement. */
const SLICE = 500;
/** How often a resume that waits for room looks again. */
const RETRY_MS = 50;
/** Ids named in the line about a channel that is gone (the first ones in acceptance order). */
const STRANDED_IDS_SAID = 10;

/** A resume of the last run's unfinished messages, which may go on after the start. */
export interface Resume {
  /** True once every stored job was loaded (or named as belonging to no channel). */
  readonly done: boolean;
  /** Settles once `done`. */
  readonly finished: Promise<void>;
  stop(): void;
}

/**
 * Step 4, with `state_dir`: the unfinished messages of the last run go back on their queues in
 * acceptance order, as far as each channel's queue has room (`webhook.buffer_capacity`), so that
 * a resume never holds more in memory than the buffers do, even after a capacity was lowered.
 * Each channel reads on from its own position as its queue frees room, and refuses new messages
 * (`buffer_full`) until its last stored one is loaded: a new message must not run before an
 * older one of its conversation. Usually everything fits at once, before the listeners open.
 * (Replayed dead letters come back through the replay pickup, once this is done.)
 */
export function startResume(durable: SqliteLaneStore, queues: ReadonlyMap<string, JobQueue>, logger: Logger): Resume {
  // Per channel, the position of the last stored job looked at; a channel is left once done.
  const after = new Map<string, number>([...queues.keys()].map((channel) => [channel, 0]));
  // Messages of channels no longer configured, by channel (their count and first ids), said once
  // the resume is done. Every channel's scan reads every stored job: the first one counts them.
  const stranded = new Map<string, { count: number; ids: string[] }>();
  const counting = queues.keys().next().value;
  let loaded = 0;
  let timer: ReturnType<typeof setTimeout> | undefined;
  let finish = (): void => undefined;
  const finished = new Promise<void>((resolve) => {
    finish = resolve;
  });

  /** Loads what fits of `channel`; true once nothing of it is left. */
  const loadChannel = (channel: string, queue: JobQueue): boolean => {
    for (;;) {
      const room = roomIn(queue);
      if (room === 0) return false;
      const limit = Math.min(SLICE, room);
      const rows = durable.readPending(after.get(channel) ?? 0, limit);
      for (const row of rows) {
        const owner = row.job.message.channel;
        if (owner === channel) {
          if (roomIn(queue) === 0) return false;
          // A job that waited for its retry runs at its due time, as it would have here.
          queue.restore([row.job], () => row.dueAt);
          loaded += 1;
        } else if (channel === counting && !queues.has(owner)) {
          const gone = stranded.get(owner) ?? { count: 0, ids: [] };
          gone.count += 1;
          if (gone.ids.length < STRANDED_IDS_SAID) gone.ids.push(row.job.message.id);
          stranded.set(owner, gone);
        }
        after.set(channel, row.seq);
      }
      if (rows.length < limit) return true;
    }
  };

  /** Loads what fits of every channel not done; true once all are. */
  const load = (): boolean => {
    for (const [channel, queue] of queues) {
      if (!after.has(channel)) continue;
      if (loadChannel(channel, queue)) {
        after.delete(channel);
        queue.hold(false);
      } else queue.hold(true);
    }
    return after.size === 0;
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
    logger.info("resumed the rest of the unfinished messages from state_dir", { count: loaded });
    sayStranded();
    finish();
  };

  /** One line per channel that is gone, however many of its messages wait: a rename must not flood the log. */
  const sayStranded = (): void => {
    for (const [channel, gone] of stranded) {
      logger.error(
        "stored messages belong to a channel that is no longer configured; they stay in state_dir, and are delivered once a channel of that name is configured again",
        { channel, count: gone.count, message_ids: gone.ids },
      );
    }
    stranded.clear();
  };

  const doneAtOnce = load();
  // Logged when 0 too: silence would not tell "nothing to resume" from "looked in the wrong file".
  logger.info("resumed unfinished messages from state_dir", { count: loaded, ...(doneAtOnce ? {} : { more: true }) });
  if (doneAtOnce) {
    sayStranded();
    finish();
  } else timer = setTimeout(again, RETRY_MS);
  return {
    get done() {
      return after.size === 0;
    },
    finished,
    stop() {
      clearTimeout(timer);
    },
  };
}
