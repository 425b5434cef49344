import type pg from "pg";
import { type TimelinePruneBound, timelinePruneBound } from "../../../core/timeline/timeline-prune-bound.js";
import type { TimelinePrune } from "../../../core/timeline/timeline-store.js";

/**
 * Rows a prune reads and deletes per statement. Every statement runs under the pool's statement
 * timeout, and a prune after a large cut (a bound lowered, a long stop) must not be one
 * statement that times out at every try: it goes in batches, each well within the timeout.
 */
const BATCH = 2_000;

/** Where the last batch ended, as Postgres gave it back (a bigint as text). */
interface Position {
  readonly accepted_at: string;
  readonly message_id: string;
}

/**
 * Forgets what `limits` no longer keep from the Postgres timeline, in batches: the rows before
 * one bound in the acceptance index's order (the window's start or the oldest row the size
 * bound keeps, whichever is later), then the minute counts before `limits.minutesBefore`. Each
 * batch of rows is read from where the last one ended, not from the index's start, where the
 * rows just deleted stay as dead entries until a vacuum. Replicas may prune at once: a row
 * another one deleted first is simply not deleted again.
 */
export async function pruneTimeline(pool: pg.Pool, limits: TimelinePrune): Promise<void> {
  const kept =
    limits.keep > 0
      ? (
          await pool.query<Position>(
            `SELECT accepted_at, message_id FROM webhook_channel.timeline
             ORDER BY accepted_at DESC, message_id DESC LIMIT 1 OFFSET $1`,
            [limits.keep - 1],
          )
        ).rows[0]
      : undefined;
  const bound = timelinePruneBound(limits, kept && { acceptedAt: Number(kept.accepted_at), id: kept.message_id });
  let after: Position | undefined;
  for (;;) {
    const { rows } = await pool.query<Position>(batchStatement(bound, after));
    if (rows.length > 0) {
      // Skips the rows a write holds: the delete locks in its plan's order (the rows' place in
      // the table), a write in id order, and two that wait for each other deadlock (40P01),
      // failing the write's batch of events. A row skipped is deleted by a later prune.
      await pool.query(
        `DELETE FROM webhook_channel.timeline WHERE message_id IN (
           SELECT message_id FROM webhook_channel.timeline WHERE message_id = ANY($1::text[]) FOR UPDATE SKIP LOCKED)`,
        [rows.map((row) => row.message_id)],
      );
    }
    const last = rows.at(-1);
    if (rows.length < BATCH || last === undefined) break;
    after = last;
  }
  for (;;) {
    const deleted = await pool.query(
      `DELETE FROM webhook_channel.timeline_activity WHERE (minute, series) IN (
         SELECT minute, series FROM webhook_channel.timeline_activity WHERE minute < $1
         ORDER BY minute, series LIMIT $2)`,
      [limits.minutesBefore, BATCH],
    );
    if ((deleted.rowCount ?? 0) < BATCH) break;
  }
}

/** The next batch's keys: before `bound`, after `after`, oldest first. */
function batchStatement(bound: TimelinePruneBound, after: Position | undefined): { text: string; values: unknown[] } {
  const values: unknown[] = [bound.acceptedAt];
  const where: string[] = [];
  if (bound.id === null) {
    values.push(bound.activeSince);
    where.push("accepted_at < $1::bigint", "updated_at < $2::bigint");
  } else {
    values.push(bound.id);
    where.push("(accepted_at, message_id) < ($1::bigint, $2::text)");
  }
  if (after !== undefined) {
    values.push(after.accepted_at, after.message_id);
    where.push(`(accepted_at, message_id) > ($${values.length - 1}::bigint, $${values.length}::text)`);
  }
  values.push(BATCH);
  return {
    text: `SELECT accepted_at, message_id FROM webhook_channel.timeline WHERE ${where.join(" AND ")}
           ORDER BY accepted_at, message_id LIMIT $${values.length}`,
    values,
  };
}
