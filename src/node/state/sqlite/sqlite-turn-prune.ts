import type { StateDb } from "./state-db.js";

/**
 * Turns a prune deletes per statement. Each statement is a transaction of its own, and the
 * prune yields to the event loop between them: a large cut (a first prune of a database that
 * kept every turn, a retention lowered) neither holds the file's write lock long nor keeps
 * messages waiting behind it.
 */
export const SQLITE_TURN_PRUNE_BATCH = 1_000;

/**
 * Deletes the turns older than `cutoff` (epoch milliseconds; see `retentionCutoff`), batch after
 * batch, oldest first, through the `turns (at)` index. Each batch first runs `fence` in its
 * transaction, as every write of the service does, so a process another one took the file from
 * deletes nothing more (the error rejects the prune). Stops early, without an error, once the
 * database is closed. Resolves with the number of turns deleted.
 */
export async function pruneSqliteTurns(
  db: StateDb,
  cutoff: number,
  fence: () => void = () => undefined,
  batch: number = SQLITE_TURN_PRUNE_BATCH,
): Promise<number> {
  const statement = db.prepare(
    "DELETE FROM turns WHERE seq IN (SELECT seq FROM turns WHERE at < ? ORDER BY at LIMIT ?)",
  );
  const forget = db.transaction((): number => {
    fence();
    return statement.run(cutoff, batch).changes;
  });
  let deleted = 0;
  while (db.open) {
    const changes = forget.immediate();
    deleted += changes;
    // A batch short of full was the last.
    if (changes < batch) break;
    await new Promise((resolve) => setImmediate(resolve));
  }
  return deleted;
}
