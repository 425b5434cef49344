/**
 * Makes a real Postgres cluster hold every commit while it answers reads, as a synchronous
 * standby that is gone does (`synchronous_standby_names` names one that never connects), and
 * storage that stalls on flush would too; and lets the commits go again.
 */
import pg from "pg";
import { waitFor } from "./wait-for.js";

/** Names a standby that never comes, and returns once a write of a connection of its own hangs. */
export async function holdCommits(admin: pg.Client, clusterUrl: string): Promise<void> {
  const scratch = new pg.Client({ connectionString: clusterUrl });
  await scratch.connect();
  scratch.on("error", () => undefined);
  try {
    await scratch.query("CREATE TABLE IF NOT EXISTS commit_hold_scratch (n int)");
    await requireStandby(admin, "gone_standby");
    // The reload reaches the server's processes in their own time: the hold has begun once a
    // write of the scratch connection no longer commits.
    await waitFor(
      () =>
        scratch
          .query({ text: "INSERT INTO commit_hold_scratch VALUES (1)", query_timeout: 200 } as pg.QueryConfig)
          .then(
            () => undefined,
            () => true,
          ),
      10_000,
      "commits to wait for the standby",
      20,
    );
  } finally {
    await scratch.end().catch(() => undefined);
  }
}

/** Lets commits go again: those that waited go through. */
export function releaseCommits(admin: pg.Client): Promise<void> {
  return requireStandby(admin, undefined);
}

async function requireStandby(admin: pg.Client, name: string | undefined): Promise<void> {
  await admin.query(
    name === undefined
      ? "ALTER SYSTEM RESET synchronous_standby_names"
      : `ALTER SYSTEM SET synchronous_standby_names = '${name}'`,
  );
  await admin.query("SELECT pg_reload_conf()");
}
