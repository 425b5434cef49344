import type pg from "pg";

/**
 * Turns a prune deletes per statement. Every statement runs under the pool's statement timeout,
 * and a large cut (a first prune of a database that kept every turn, a retention lowered) must
 * not be one statement that times out at every try: it goes in batches, each well within it.
 */
export const POSTGRES_TURN_PRUNE_BATCH = 2_000;

/**
 * Deletes the turns older than `cutoff` (epoch milliseconds; see `retentionCutoff`), batch after
 * batch, through the `turns (at)` index. Replicas prune at once: each batch skips the rows
 * another one's batch (or an append's trim) holds rather than wait for them, and a row deleted
 * first elsewhere is simply not deleted again. Resolves with the number of turns deleted here.
 */
export async function prunePostgresTurns(
  pool: pg.Pool,
  cutoff: number,
  batch: number = POSTGRES_TURN_PRUNE_BATCH,
): Promise<number> {
  let deleted = 0;
  for (;;) {
    const result = await pool.query(
      `DELETE FROM webhook_channel.turns WHERE seq IN (
         SELECT seq FROM webhook_channel.turns WHERE at < $1 LIMIT $2 FOR UPDATE SKIP LOCKED)`,
      [cutoff, batch],
    );
    const count = result.rowCount ?? 0;
    deleted += count;
    // A batch short of full was the last (or the rest is another replica's to delete).
    if (count < batch) return deleted;
  }
}
