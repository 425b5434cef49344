import { errorMessage } from "../../../core/channel-error.js";
import type { StateDb } from "./sqlite-state.js";

/**
 * Takes and releases the write lock in an empty transaction: a read-only or broken database,
 * or a closed connection, fails here. It never waits for the lock (a probe must not block the
 * event loop): a lock held by another writer (the delivery thread, the CLI) means the store
 * works, so SQLITE_BUSY counts as writable.
 */
export function probeWrite(db: StateDb): string | undefined {
  try {
    withoutWaiting(db, () => {
      db.exec("BEGIN IMMEDIATE");
      db.exec("ROLLBACK");
    });
    return undefined;
  } catch (error) {
    if (isBusy(error)) return undefined;
    return errorMessage(error);
  }
}

/** Runs `work` with the connection's busy timeout at 0: a probe must not block the event loop. */
function withoutWaiting(db: StateDb, work: () => void): void {
  const timeout: unknown = db.pragma("busy_timeout", { simple: true });
  db.pragma("busy_timeout = 0");
  try {
    work();
  } finally {
    db.pragma(`busy_timeout = ${Number(timeout)}`);
  }
}

function isBusy(error: unknown): boolean {
  return typeof error === "object" && error !== null && "code" in error && error.code === "SQLITE_BUSY";
}

/** A row id no message can have (ids are generated without control characters). */
const CHECK_ID = "\u0000write-check";

/**
 * Written and deleted in one committed transaction, so the commit appends to the WAL as a
 * message's does: the empty transaction of {@link probeWrite} succeeds on a full disk.
 */
const CHECK_BODY = "x".repeat(1024);

/**
 * Confirms that a message's write commits now: a `jobs` row written, deleted and committed
 * behind `fence`. Asked only after a write failed, since nothing else clears that failure while
 * no message arrives. Answers the `performance.now()` at which the check began, or undefined
 * when it failed or another writer held the lock (asked again at the next probe).
 */
export function confirmWrite(db: StateDb, fence: () => void): number | undefined {
  const started = performance.now();
  try {
    withoutWaiting(db, () =>
      db
        .transaction(() => {
          fence();
          db.prepare("INSERT INTO jobs (id, job, state) VALUES (?, ?, 'check')").run(CHECK_ID, CHECK_BODY);
          db.prepare("DELETE FROM jobs WHERE id = ?").run(CHECK_ID);
        })
        .immediate(),
    );
    return started;
  } catch {
    return undefined;
  }
}
