/**
 * A migrated database of its own for a Postgres test file (or test), in the run's cluster
 * (`inject("postgresUrl")`), with pools that are ended after the file.
 */
import type pg from "pg";
import { afterAll, inject } from "vitest";
import { migratePostgres } from "../../../../src/node/state/postgres/postgres-migrations.js";
import { openPostgresPool } from "../../../../src/node/state/postgres/postgres-pool.js";
import { createTestDatabase } from "../../../support/postgres-cluster.js";

const pools: pg.Pool[] = [];

afterAll(async () => {
  await Promise.all(pools.splice(0).map((pool) => pool.end()));
});

/** A pool on `url`, ended after the file. */
export function poolOn(url: string, options: Parameters<typeof openPostgresPool>[1] = {}): pg.Pool {
  const pool = openPostgresPool(url, options);
  pools.push(pool);
  return pool;
}

/** A fresh, empty database in the test cluster: its URL. */
export function emptyDatabase(): Promise<string> {
  return createTestDatabase(inject("postgresUrl"));
}

/** A fresh database with the schema: its URL and a pool on it. */
export async function migratedDatabase(): Promise<{ url: string; pool: pg.Pool }> {
  const url = await emptyDatabase();
  const pool = poolOn(url);
  await migratePostgres(pool);
  return { url, pool };
}

/**
 * Makes the sessions opened on database `url` from now on read Postgres's notification queue as
 * `usage` full: filling the real queue takes gigabytes. A stand-in for
 * `pg_notification_queue_usage()` in a schema searched before `pg_catalog`.
 */
export async function notificationQueueAt(url: string, pool: pg.Pool, usage: number): Promise<void> {
  await pool.query(`CREATE SCHEMA queue_shim;
    CREATE FUNCTION queue_shim.pg_notification_queue_usage() RETURNS double precision LANGUAGE sql AS 'SELECT ${Number(usage)}'`);
  await pool.query(
    `ALTER DATABASE "${new URL(url).pathname.slice(1)}" SET search_path = queue_shim, pg_catalog, public`,
  );
}
