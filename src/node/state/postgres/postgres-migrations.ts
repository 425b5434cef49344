import type pg from "pg";
import { lockPendingTables } from "./postgres-migration-locks.js";
import { inTransaction, timedQuery } from "./postgres-pool.js";
import { POSTGRES_MIGRATIONS, POSTGRES_SCHEMA, POSTGRES_SCHEMA_VERSION } from "./postgres-schema-steps.js";

/** How long the client waits for a migration's statements (and for another replica's migration). */
const MIGRATION_TIMEOUT_MS = 600_000;

/**
 * The advisory lock the migration transaction holds ("whchstat" as a 64-bit number): replicas
 * that start at once queue on it, and each one after the first finds the schema up to date.
 */
export const MIGRATION_LOCK_KEY = "8604236388356088180";

/**
 * Brings the database up to {@link POSTGRES_SCHEMA_VERSION} in one transaction under
 * {@link MIGRATION_LOCK_KEY}, and throws, migrating nothing, when the database was written by a
 * newer webhook-channel. An up-to-date database is only read (no DDL, no lock), so a role
 * without CREATE rights can run a database an administrator migrated. Returns the version.
 */
export async function migratePostgres(pool: pg.Pool): Promise<number> {
  const found = await schemaVersion(pool);
  if (found !== undefined) {
    assertSupported(found);
    if (found === POSTGRES_SCHEMA_VERSION) return found;
  }
  await inTransaction(pool, async (client) => {
    // A migration may wait for another replica's, and a large table's may take a while: neither
    // the statement timeout nor the client's wait of ordinary statements applies here. A
    // migration's statements read whole tables, which a scan reads fastest.
    await client.query("SET LOCAL statement_timeout = 0");
    await client.query("SET LOCAL enable_seqscan = on");
    await client.query(
      timedQuery("SELECT pg_advisory_xact_lock($1::bigint)", MIGRATION_TIMEOUT_MS, [MIGRATION_LOCK_KEY]),
    );
    await client.query(`CREATE SCHEMA IF NOT EXISTS ${POSTGRES_SCHEMA}`);
    await client.query(`CREATE TABLE IF NOT EXISTS ${POSTGRES_SCHEMA}.schema_migrations (
      version int PRIMARY KEY,
      description text NOT NULL,
      applied_at timestamptz NOT NULL DEFAULT now()
    )`);
    const locked = (await schemaVersion(client)) ?? 0;
    assertSupported(locked);
    const pending = POSTGRES_MIGRATIONS.filter((entry) => entry.version > locked);
    if (locked > 0) await lockPendingTables(client, pending);
    for (const migration of pending) {
      if (migration.exclusive === true && locked > 0) await assertNoLiveReplicas(client, locked, migration.version);
      await client.query(timedQuery(migration.sql, MIGRATION_TIMEOUT_MS));
      await client.query(`INSERT INTO ${POSTGRES_SCHEMA}.schema_migrations (version, description) VALUES ($1, $2)`, [
        migration.version,
        migration.description,
      ]);
    }
  });
  return POSTGRES_SCHEMA_VERSION;
}

/**
 * Refuses an exclusive migration while a replica (of the older code: this one has no lease yet)
 * holds a live lease, naming what to do; a replica that stopped or was killed no longer counts
 * once its lease has run out.
 */
async function assertNoLiveReplicas(client: pg.PoolClient, from: number, to: number): Promise<void> {
  const live = await client.query<{ count: string }>(
    `SELECT count(*) AS count FROM ${POSTGRES_SCHEMA}.replicas WHERE lease_until > now()`,
  );
  const count = Number(live.rows[0]?.count ?? 0);
  if (count === 0) return;
  throw new Error(
    `the postgres database has webhook-channel schema version ${from}, and ${count} replica(s) of an older webhook-channel still run against it (a live lease in ${POSTGRES_SCHEMA}.replicas): version ${to} changes how replicas share conversations, so stop every replica, then start this version (a killed replica's lease runs out within seconds)`,
  );
}

/** The database's schema version, or undefined before the first migration created the table. */
async function schemaVersion(db: pg.Pool | pg.PoolClient): Promise<number | undefined> {
  const table = await db.query<{ found: string | null }>("SELECT to_regclass($1) AS found", [
    `${POSTGRES_SCHEMA}.schema_migrations`,
  ]);
  if (table.rows[0]?.found == null) return undefined;
  const version = await db.query<{ version: number | null }>(
    `SELECT max(version) AS version FROM ${POSTGRES_SCHEMA}.schema_migrations`,
  );
  return version.rows[0]?.version ?? 0;
}

function assertSupported(version: number): void {
  // Older code cannot know what a newer layout means; writing to it could lose jobs.
  if (version > POSTGRES_SCHEMA_VERSION) {
    throw new Error(
      `the postgres database has webhook-channel schema version ${version}, but this webhook-channel supports up to version ${POSTGRES_SCHEMA_VERSION}: it was written by a newer webhook-channel; upgrade webhook-channel to use it`,
    );
  }
}
