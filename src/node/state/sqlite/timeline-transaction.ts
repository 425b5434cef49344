import { errorMessage } from "../../../core/channel-error.js";
import type { StateDb } from "./state-db.js";
import type { TimelineWriterLoss } from "./timeline-writer-messages.js";

/**
 * How long the timeline writer thread keeps one transaction open for the batches that come.
 * A commit writes every page the batches touched, and the conversation index's pages are
 * touched all over; the longer a transaction gathers, the more of a page's entries one write
 * of it carries. Another connection (the admin API's reads, the CLI) asks for a commit first.
 */
export const TIMELINE_COMMIT_MS = 1_000;

/** The timeline writer's open transaction (see {@link createTimelineTransaction}). */
export interface TimelineTransaction {
  /** Runs `apply` (a write of `messages` messages) in the open transaction, opening one if none is. */
  write(apply: () => void, messages: number): void;
  /** Commits what was written, if anything; a failure is reported to `lost` and not thrown. */
  commit(): void;
}

/**
 * Batches written into one transaction for up to {@link TIMELINE_COMMIT_MS}. Each write is a
 * savepoint in it (a better-sqlite3 transaction function run inside a transaction is one), so a
 * batch that fails leaves the others. The timeline is a record: a commit that fails loses the
 * batches since the last one, and `lost` says how many messages they held.
 */
export function createTimelineTransaction(db: StateDb, lost: (loss: TimelineWriterLoss) => void): TimelineTransaction {
  let messages = 0;
  let timer: ReturnType<typeof setTimeout> | undefined;

  /** Ends the open transaction's bookkeeping; what it held is lost when `error` says why. */
  const ended = (error?: unknown): void => {
    clearTimeout(timer);
    timer = undefined;
    const count = messages;
    messages = 0;
    if (count > 0 && error !== undefined) lost({ kind: "lost", messages: count, error: errorMessage(error) });
  };

  const commit = (): void => {
    if (!db.inTransaction) {
      ended(messages > 0 ? new Error("the transaction was rolled back") : undefined);
      return;
    }
    try {
      db.exec("COMMIT");
      ended();
    } catch (error) {
      if (db.inTransaction) db.exec("ROLLBACK");
      ended(error);
    }
  };

  return {
    write(apply, count) {
      if (!db.inTransaction) {
        // IMMEDIATE: the write lock now, or an error now, rather than at the commit.
        db.exec("BEGIN IMMEDIATE");
        timer = setTimeout(commit, TIMELINE_COMMIT_MS);
      }
      try {
        apply();
      } catch (error) {
        // A failure SQLite answers by rolling back the whole transaction takes the batches before it.
        if (!db.inTransaction) ended(error);
        throw error;
      }
      messages += count;
    },
    commit,
  };
}
