import { errorMessage } from "../../../core/channel-error.js";
import type { StateDb } from "./sqlite-state.js";

/**
 * Takes and releases the write lock in an empty transaction: a read-only or broken database,
 * or a closed connection, fails here. It never waits for the lock (a probe must not block the
 * event loop): a lock held by another writer (the delivery thread, the CLI) means the store
 * works, so SQLITE_BUSY counts as writable.
 */
export function probeWrite(db: StateDb): string | undefined {
  let timeout: unknown;
  try {
    timeout = db.pragma("busy_timeout", { simple: true });
    db.pragma("busy_timeout = 0");
    try {
      db.exec("BEGIN IMMEDIATE");
      db.exec("ROLLBACK");
    } finally {
      db.pragma(`busy_timeout = ${Number(timeout)}`);
    }
    return undefined;
  } catch (error) {
    if (isBusy(error)) return undefined;
    return errorMessage(error);
  }
}

function isBusy(error: unknown): boolean {
  return typeof error === "object" && error !== null && "code" in error && error.code === "SQLITE_BUSY";
}
