import type pg from "pg";

/**
 * Lane rows a pass reads per statement: every statement runs under the pool's statement
 * timeout, so a pass over a database of millions of conversations goes in slices.
 */
export const POSTGRES_IDLE_LANE_BATCH = 2_000;

/**
 * Deletes the lane row (the reply counter and the claims' epoch) of every conversation nobody
 * runs that was let go before `cutoff` (epoch milliseconds, from `idleCutoff`) and has no job
 * stored, slice after slice of the table in its key's order: its next reply is numbered 1 again,
 * and its next claim starts an epoch above every old one (see the claim's first epoch). A row
 * claimed meanwhile no longer qualifies once locked, and replicas pass at once: each slice skips
 * the rows another one holds. An add of a job that the snapshot missed may lose its lane's
 * counter, which its conversation's idleness called for anyway. Resolves with the number of
 * rows deleted here.
 */
export async function forgetIdlePostgresLanes(
  pool: pg.Pool,
  cutoff: number,
  batch: number = POSTGRES_IDLE_LANE_BATCH,
): Promise<number> {
  let deleted = 0;
  let after = "";
  for (;;) {
    const result = await pool.query<{ last: string | null; read: number; gone: number }>(
      `WITH slice AS (
         SELECT conversation FROM webhook_channel.lanes WHERE conversation > $1 ORDER BY conversation LIMIT $2),
       idle AS (
         SELECT l.conversation FROM webhook_channel.lanes l JOIN slice USING (conversation)
         WHERE l.owner IS NULL AND l.used_at < to_timestamp($3::double precision / 1000)
           AND NOT EXISTS (SELECT 1 FROM webhook_channel.jobs j WHERE j.conversation = l.conversation)
         FOR UPDATE OF l SKIP LOCKED),
       gone AS (DELETE FROM webhook_channel.lanes l USING idle WHERE l.conversation = idle.conversation RETURNING 1)
       SELECT (SELECT max(conversation) FROM slice) AS last, (SELECT count(*)::int FROM slice) AS read,
              (SELECT count(*)::int FROM gone) AS gone`,
      [after, batch, cutoff],
    );
    const row = result.rows[0];
    deleted += row?.gone ?? 0;
    // A slice short of full was the last.
    if (row === undefined || row.last === null || row.read < batch) return deleted;
    after = row.last;
  }
}
