/**
 * The tests' private Postgres cluster (scripts/postgres-cluster.mjs, which the bench uses too),
 * and a database per test file ({@link createTestDatabase}), so that files running in parallel
 * never see each other's rows.
 */
import pg from "pg";

export { type PostgresCluster, postgresBinDir, startPostgresCluster } from "../../scripts/postgres-cluster.mjs";

/** A fresh, empty database in the cluster of `url`; returns its URL. */
export async function createTestDatabase(url: string): Promise<string> {
  const name = `wc_${Date.now().toString(36)}_${Math.random().toString(36).slice(2, 8)}`;
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await client.query(`CREATE DATABASE ${name}`);
  } finally {
    await client.end();
  }
  const next = new URL(url);
  next.pathname = `/${name}`;
  return next.toString();
}
