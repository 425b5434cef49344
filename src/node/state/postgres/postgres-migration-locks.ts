import type pg from "pg";
import { POSTGRES_SCHEMA, type PostgresMigration, type TableLock } from "./postgres-schema-steps.js";

/**
 * The order the service's statements take their tables in: a group's statement takes `lanes`,
 * then `idempotency`, then `jobs` (its CTEs' order); a claim `lanes`, then `replicas`, then
 * `jobs`; turns come last. A migration that takes two of them in another order while a replica
 * of the older code runs a statement could deadlock with it: the one aborted is a replica's
 * write (an attempt retried, a message refused) or the start itself. One statement disagrees,
 * the sweep's `markSwept` (the replicas, then the lanes), so a database brought up across version
 * 6 and version 9 at once may still see it or the migration aborted once (the next sweep runs it
 * again; a start that failed is started again).
 */
const LOCK_ORDER: readonly TableLock["table"][] = ["lanes", "idempotency", "replicas", "jobs", "turns"];

const STRENGTH: Readonly<Record<TableLock["mode"], number>> = {
  "SHARE UPDATE EXCLUSIVE": 1,
  SHARE: 2,
  "ACCESS EXCLUSIVE": 3,
};

/**
 * Takes, in {@link LOCK_ORDER}, every table lock the `pending` steps will take (the strongest one
 * asked for each table), before the first step runs: the steps then find their locks held, and
 * the migration waits for the statements of older replicas the way each of them waits for the
 * others, never holding one table they want while it waits for another. Call inside the
 * migration's transaction, on a database whose tables exist.
 */
export async function lockPendingTables(client: pg.PoolClient, pending: readonly PostgresMigration[]): Promise<void> {
  const wanted = new Map<TableLock["table"], TableLock["mode"]>();
  for (const { locks } of pending) {
    for (const { table, mode } of locks ?? []) {
      const held = wanted.get(table);
      if (held === undefined || STRENGTH[mode] > STRENGTH[held]) wanted.set(table, mode);
    }
  }
  for (const table of LOCK_ORDER) {
    const mode = wanted.get(table);
    if (mode !== undefined) await client.query(`LOCK TABLE ${POSTGRES_SCHEMA}.${table} IN ${mode} MODE`);
  }
}
