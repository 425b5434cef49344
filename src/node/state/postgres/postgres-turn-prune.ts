import type pg from "pg";
import { deleteInBatches, POSTGRES_DELETE_BATCH } from "./postgres-batched-delete.js";

/** Turns a prune deletes per statement (see {@link deleteInBatches}). */
export const POSTGRES_TURN_PRUNE_BATCH = POSTGRES_DELETE_BATCH;

/**
 * Deletes the turns older than `cutoff` (epoch milliseconds; see `retentionCutoff`), batch after
 * batch, through the `turns (at)` index, each batch skipping the rows another replica's batch
 * (or an append's trim) holds. Resolves with the number of turns deleted here.
 */
export function prunePostgresTurns(
  pool: pg.Pool,
  cutoff: number,
  batch: number = POSTGRES_TURN_PRUNE_BATCH,
): Promise<number> {
  return deleteInBatches(
    pool,
    `DELETE FROM webhook_channel.turns WHERE seq IN (
       SELECT seq FROM webhook_channel.turns WHERE at < $1 LIMIT $2 FOR UPDATE SKIP LOCKED)`,
    [cutoff],
    batch,
  );
}
