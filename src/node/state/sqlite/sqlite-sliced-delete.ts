import type { StateDb } from "./state-db.js";

/**
 * Rows a periodic delete removes per transaction. Each slice is a transaction of its own, and
 * the delete yields to the event loop between them: a large cut (a first prune of a file that
 * kept every row, a retention lowered) neither holds the file's write lock long nor keeps
 * messages waiting behind it.
 */
export const SQLITE_DELETE_SLICE = 1_000;

/**
 * Runs `sql` (a DELETE whose last parameter is the slice's row limit) with `args` and the limit,
 * slice after slice, until a slice deletes fewer than the limit. Each slice first runs `fence`
 * in its transaction, as every write of the service does, so a process another one took the
 * file from deletes nothing more (the error rejects the delete). Stops early, without an error,
 * once the database is closed. Resolves with the number of rows deleted.
 */
export async function deleteInSlices(
  db: StateDb,
  sql: string,
  args: readonly unknown[],
  fence: () => void,
  slice: number = SQLITE_DELETE_SLICE,
): Promise<number> {
  const statement = db.prepare(sql);
  const cut = db.transaction((): number => {
    fence();
    return statement.run(...args, slice).changes;
  });
  let deleted = 0;
  while (db.open) {
    const changes = cut.immediate();
    deleted += changes;
    // A slice short of full was the last.
    if (changes < slice) break;
    await new Promise((resolve) => setImmediate(resolve));
  }
  return deleted;
}
