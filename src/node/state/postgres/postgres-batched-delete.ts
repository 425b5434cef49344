import type pg from "pg";

/**
 * Rows a periodic delete removes per statement. Every statement runs under the pool's statement
 * timeout, and a large cut (a first prune of a database that kept every row, a retention lowered)
 * must not be one statement that times out at every try: it goes in batches, each well within it.
 */
export const POSTGRES_DELETE_BATCH = 2_000;

/**
 * Runs `sql` (a DELETE whose last parameter is the batch's row limit, which should skip the rows
 * others hold: `FOR UPDATE SKIP LOCKED`) with `args` and the limit, until a batch deletes fewer
 * than the limit (the last, or the rest is another replica's to delete). Replicas prune at once:
 * a row deleted first elsewhere is simply not deleted again. Resolves with the rows deleted here.
 */
export async function deleteInBatches(
  pool: pg.Pool,
  sql: string,
  args: readonly unknown[],
  batch: number = POSTGRES_DELETE_BATCH,
): Promise<number> {
  let deleted = 0;
  for (;;) {
    const result = await pool.query(sql, [...args, batch]);
    const count = result.rowCount ?? 0;
    deleted += count;
    if (count < batch) return deleted;
  }
}
