import { deleteInSlices, SQLITE_DELETE_SLICE } from "./sqlite-sliced-delete.js";
import type { StateDb } from "./state-db.js";

/** Turns a prune deletes per transaction (see {@link deleteInSlices}). */
export const SQLITE_TURN_PRUNE_BATCH = SQLITE_DELETE_SLICE;

/**
 * Deletes the turns older than `cutoff` (epoch milliseconds; see `retentionCutoff`), slice after
 * slice, oldest first, through the `turns (at)` index, behind `fence`. Resolves with the number
 * of turns deleted.
 */
export function pruneSqliteTurns(
  db: StateDb,
  cutoff: number,
  fence: () => void = () => undefined,
  batch: number = SQLITE_TURN_PRUNE_BATCH,
): Promise<number> {
  return deleteInSlices(
    db,
    "DELETE FROM turns WHERE seq IN (SELECT seq FROM turns WHERE at < ? ORDER BY at LIMIT ?)",
    [cutoff],
    fence,
    batch,
  );
}
