/**
 * The tests' private Postgres cluster (scripts/postgres-cluster.mjs, which the bench uses too),
 * and a database per test file ({@link createTestDatabase}), so that files running in parallel
 * never see each other's rows.
 */
import { createDatabase } from "../../scripts/postgres-cluster.mjs";

export { type PostgresCluster, postgresBinDir, startPostgresCluster } from "../../scripts/postgres-cluster.mjs";

/** A fresh, empty database in the cluster of `url`; returns its URL. */
export function createTestDatabase(url: string): Promise<string> {
  return createDatabase(url, `wc_${Date.now().toString(36)}_${Math.random().toString(36).slice(2, 8)}`);
}
