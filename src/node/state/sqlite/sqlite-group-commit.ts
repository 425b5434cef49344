import { errorMessage } from "../../../core/channel-error.js";
import type { Logger } from "../../../core/log/logger.js";
import type { StateDb } from "./sqlite-state.js";

/** How long writes whose commit may wait (finished jobs' deletes) wait at most for a group to ride on. */
export const LATER_WRITES_MAX_WAIT_MS = 1_000;

/** What one store hands over to a group: written inside its transaction, then told how it went. */
export interface GroupBatch {
  /** Runs the store's statements; called inside the group's transaction. */
  write(): void;
  /** Called once the group committed (`error` undefined) or rolled back. */
  settled(error: unknown): void;
}

/** A store that writes through a {@link GroupCommit}. */
export interface GroupPart {
  /**
   * Hands over everything it holds for the group now forming and forgets it, so that what
   * arrives while the group commits goes to the next one; undefined when it holds nothing.
   */
  take(): GroupBatch | undefined;
}

/** One transaction per event-loop turn for the stores of one connection. */
export interface GroupCommit {
  /** `part` has writes to commit at the end of this turn (a 200 or a POST waits for them). */
  soon(part: GroupPart): void;
  /**
   * `part` has writes whose commit may wait: they ride on the next group, or commit on their
   * own after {@link LATER_WRITES_MAX_WAIT_MS}.
   */
  later(part: GroupPart): void;
  /** Commits what every part holds now (before the connection closes). */
  flush(): void;
}

/**
 * Group commit over one SQLite connection. A commit, not a statement, is what a write costs
 * here (about 100 µs on the bench machine against a few µs per statement): so every write of
 * one event-loop turn, whichever store it is for (accepted jobs, progress, sequence numbers,
 * conversation memory, finished jobs), shares one transaction, committed on `setImmediate`.
 * A failed group is told to every part, which fails what it took (a 503, a retried step) or
 * logs it (a delete: the job is delivered again after a restart, with the same webhook-id).
 * `fence` runs first in each transaction and throws to refuse the whole group (another process
 * has taken the state over).
 */
export function createGroupCommit(db: StateDb, logger: Logger, fence?: () => void): GroupCommit {
  const parts = new Set<GroupPart>();
  let scheduled = false;
  let timer: ReturnType<typeof setTimeout> | undefined;

  const flush = (): void => {
    scheduled = false;
    clearTimeout(timer);
    timer = undefined;
    const batches: GroupBatch[] = [];
    for (const part of parts) {
      const batch = part.take();
      if (batch !== undefined) batches.push(batch);
    }
    parts.clear();
    if (batches.length === 0) return;
    let failure: unknown;
    try {
      // IMMEDIATE: the write lock first, so that another writer's lock (the CLI's replay, say) is
      // waited for; a deferred one would read the fence first, and SQLite never waits to turn a
      // read into a write, failing at once.
      db.transaction(() => {
        fence?.();
        for (const batch of batches) batch.write();
      }).immediate();
    } catch (error) {
      failure = error ?? new Error("the state_dir transaction failed");
    }
    for (const batch of batches) {
      try {
        batch.settled(failure);
      } catch (error) {
        // One part's bookkeeping must not cost the others their answer.
        logger.error("cannot settle a state_dir write", { error: errorMessage(error) });
      }
    }
  };

  return {
    soon(part) {
      parts.add(part);
      if (scheduled) return;
      scheduled = true;
      setImmediate(flush);
    },
    later(part) {
      parts.add(part);
      if (scheduled || timer !== undefined) return;
      timer = setTimeout(flush, LATER_WRITES_MAX_WAIT_MS);
      // Nothing else to do must not keep the process alive for a delete: a stop flushes.
      timer.unref();
    },
    flush,
  };
}
