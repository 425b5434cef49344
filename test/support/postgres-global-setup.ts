/**
 * Vitest global setup of the `node` project: one private Postgres cluster for the run (see
 * `startPostgresCluster`), its URL given to test files as `inject("postgresUrl")`. It starts with
 * the run, whichever files run: vitest has no lazy global setup, and a cluster costs about two
 * seconds.
 */
import type { TestProject } from "vitest/node";
import { startPostgresCluster } from "./postgres-cluster.js";

declare module "vitest" {
  export interface ProvidedContext {
    /** The test cluster's URL (trust authentication): make a database per file with createTestDatabase. */
    postgresUrl: string;
  }
}

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const cluster = await startPostgresCluster();
  project.provide("postgresUrl", cluster.url);
  return () => cluster.stop();
}
