import type pg from "pg";

/**
 * Lane rows a pass deletes per statement: every statement runs under the pool's statement
 * timeout, so a first pass over a database that kept every conversation goes in batches.
 */
export const POSTGRES_IDLE_LANE_BATCH = 2_000;

/**
 * Deletes the lane row (the reply counter and the claims' epoch) of every conversation nobody
 * runs that was let go before `cutoff` (epoch milliseconds, from `idleCutoff`) and has no job
 * stored, batch after batch, through the index of such rows: its next reply is numbered 1
 * again, and its next claim starts an epoch above every old one (see the claim's first epoch).
 * A row claimed meanwhile no longer qualifies once locked, and replicas pass at once: each
 * batch skips the rows another one holds. An add of a job that the snapshot missed may lose
 * its lane's counter, which its conversation's idleness called for anyway. Resolves with the
 * number of rows deleted here.
 */
export async function forgetIdlePostgresLanes(
  pool: pg.Pool,
  cutoff: number,
  batch: number = POSTGRES_IDLE_LANE_BATCH,
): Promise<number> {
  let deleted = 0;
  for (;;) {
    const result = await pool.query(
      `WITH idle AS (
         SELECT l.conversation FROM webhook_channel.lanes l
         WHERE l.owner IS NULL AND l.used_at < to_timestamp($1::double precision / 1000)
           AND NOT EXISTS (SELECT 1 FROM webhook_channel.jobs j WHERE j.conversation = l.conversation)
         ORDER BY l.used_at LIMIT $2 FOR UPDATE OF l SKIP LOCKED)
       DELETE FROM webhook_channel.lanes l USING idle WHERE l.conversation = idle.conversation`,
      [cutoff, batch],
    );
    const count = result.rowCount ?? 0;
    deleted += count;
    // A batch short of full was the last (or the rest is another replica's to delete).
    if (count < batch) return deleted;
  }
}
