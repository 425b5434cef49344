import type { Logger } from "../../core/log/logger.js";

/**
 * How long the oldest accepted message may wait for its store's commit before the queue takes no
 * more: a database that falls behind (saturated, checkpointing, frozen) would otherwise gather
 * requests that each wait for the commit's time limit and then get 503 `state_unavailable`,
 * while new ones add to its load. Refused at once instead, clients back off and the database
 * catches up; the queue takes messages again once the waiting commits have settled (committed,
 * failed or timed out). Well above a healthy commit, well below the commit's own time limit.
 */
export const COMMIT_LAG_MS = 1_000;

/** The accepted messages whose store writes are still waiting for their commit. */
export interface CommitLag {
  /** Message `id`'s write was asked for now. */
  asked(id: string): void;
  /** Message `id`'s write committed or failed. */
  settled(id: string): void;
  /** True while the oldest write still waiting was asked more than {@link COMMIT_LAG_MS} ago. */
  lagging(): boolean;
}

/**
 * A {@link CommitLag} on the queue's clock. Each spell of lagging is logged once as it is first
 * seen (`warn`) and once as it ends (`info`): the buffer is not full then, so the 503s need saying.
 */
export function createCommitLag(now: () => number, logger: Logger, channel: string | undefined): CommitLag {
  const where = channel === undefined ? {} : { channel };
  // In the order asked, so the first entry is the oldest.
  const waiting = new Map<string, number>();
  let reported = false;
  const oldestWait = (): number => {
    const first = waiting.values().next();
    return first.done === true ? 0 : now() - first.value;
  };
  return {
    asked: (id) => {
      waiting.set(id, now());
    },
    settled: (id) => {
      waiting.delete(id);
      if (reported && oldestWait() <= COMMIT_LAG_MS) {
        reported = false;
        logger.info("the database commits accepted messages again; new messages are taken", where);
      }
    },
    lagging: () => {
      const waited = oldestWait();
      if (waited <= COMMIT_LAG_MS) return false;
      if (!reported) {
        reported = true;
        logger.warn(
          "an accepted message has waited over a second for its database commit; new messages are refused with 503 buffer_full until the waiting commits settle",
          { ...where, waiting: waiting.size, waited_ms: waited },
        );
      }
      return true;
    },
  };
}
