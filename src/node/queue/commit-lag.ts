import { commitsBehindError, stateDownError } from "../../core/app/refusals.js";
import type { ChannelError } from "../../core/channel-error.js";
import type { Logger } from "../../core/log/logger.js";

/**
 * How long a new message may expect to wait for its store's commit before the queue takes no
 * more: a database that falls behind (saturated, checkpointing, frozen) would otherwise gather
 * requests that each wait for the commit's time limit and then get 503 `state_unavailable`,
 * while new ones add to its load. Refused at once instead, clients back off and the database
 * catches up. Well above a healthy commit, well below the commit's own time limit.
 */
export const COMMIT_LAG_MS = 1_000;

/** The accepted messages whose store writes are still waiting for their commit. */
export interface CommitLag {
  /** Message `id`'s write was asked for now. */
  asked(id: string): void;
  /** Message `id`'s write settled: `committed`, or failed (timed out, refused). */
  settled(id: string, committed: boolean): void;
  /**
   * True while the oldest write still waiting was asked more than {@link COMMIT_LAG_MS} ago and
   * more writes wait than the store committed in the last {@link COMMIT_LAG_MS}: a new message
   * would wait longer than the bound. A store that commits slowly but steadily keeps taking as
   * many as it commits; a frozen one, which commits none, takes none.
   */
  lagging(): boolean;
  /**
   * Why a new message is refused now, undefined while it is taken: 503 `state_unavailable` while
   * the store is known not to take writes (one that does not answer commits none, and a write
   * asked of it would wait for its time limit; one that is read-only would fail it), else
   * `buffer_full` while {@link lagging}.
   */
  refusal(): ChannelError | undefined;
}

/**
 * A {@link CommitLag} on the queue's clock. Each spell of lagging is logged once as it is first
 * seen (`warn`) and once at the first commit after it (`info`): the buffer is not full then, so
 * the 503s need saying.
 * `knownProblem` is what already stops the store's writes, known without asking it (the backend
 * logs its changes): without it, a freeze longer than a write's time limit would take messages
 * again each time the writes waiting gave up, and each would wait for that limit in turn.
 */
export function createCommitLag(
  now: () => number,
  logger: Logger,
  channel: string | undefined,
  knownProblem?: () => string | undefined,
): CommitLag {
  const where = channel === undefined ? {} : { channel };
  // In the order asked, so the first entry is the oldest.
  const waiting = new Map<string, number>();
  const committed = createWindowCount(COMMIT_LAG_MS);
  let reported = false;
  const oldestWait = (at: number): number => {
    const first = waiting.values().next();
    return first.done === true ? 0 : at - first.value;
  };
  const behind = (at: number): boolean => oldestWait(at) > COMMIT_LAG_MS && waiting.size > committed.within(at);
  const lagging = (): boolean => {
    const at = now();
    if (!behind(at)) return false;
    if (!reported) {
      reported = true;
      logger.warn(
        "accepted messages wait over a second for their database commit, and more wait than it committed in the last second; new messages are refused with 503 buffer_full until it catches up",
        { ...where, waiting: waiting.size, waited_ms: oldestWait(at), committed_last_second: committed.within(at) },
      );
    }
    return true;
  };
  return {
    asked: (id) => {
      waiting.set(id, now());
    },
    settled: (id, wasCommitted) => {
      waiting.delete(id);
      const at = now();
      if (wasCommitted) committed.add(at);
      // Writes that gave up end the refusals but not the logged spell: only a commit says the
      // database commits again.
      if (reported && wasCommitted && !behind(at)) {
        reported = false;
        logger.info("the database commits accepted messages again; new messages are taken", where);
      }
    },
    lagging,
    refusal: () => {
      if (knownProblem?.() !== undefined) return stateDownError();
      return lagging() ? commitsBehindError() : undefined;
    },
  };
}

/**
 * Counts events in a sliding window of `windowMs`: whole windows on a fixed grid, the one before
 * the current counted for the part of it the sliding window still covers, as if its events were
 * spread evenly over it.
 */
interface WindowCount {
  add(at: number): void;
  /** About how many were added in the `windowMs` before `at`, rounded up. */
  within(at: number): number;
}

function createWindowCount(windowMs: number): WindowCount {
  let index = Number.NEGATIVE_INFINITY;
  let current = 0;
  let previous = 0;
  const roll = (at: number): number => {
    const now = Math.floor(at / windowMs);
    if (now !== index) {
      // Only the window just before counts; a clock that stepped back starts afresh.
      previous = now === index + 1 ? current : 0;
      current = 0;
      index = now;
    }
    return (at - now * windowMs) / windowMs;
  };
  return {
    add(at) {
      roll(at);
      current += 1;
    },
    within(at) {
      const into = roll(at);
      return current + Math.ceil(previous * (1 - into));
    },
  };
}
