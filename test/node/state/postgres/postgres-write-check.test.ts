/**
 * The probe's write check commits a write: a database that answers reads while its commits hang
 * (a synchronous standby that is gone) or that turned read-only stops writes within a probe's
 * limit, and takes them again once it commits. A private cluster, since both faults are set for
 * the whole server (`ALTER SYSTEM`, then a reload that every session reads).
 */
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { systemClock } from "../../../../src/core/clock.js";
import { openPostgresBackend, type PostgresBackend } from "../../../../src/node/state/postgres/postgres-backend.js";
import { createLogSink } from "../../../support/log-sink.js";
import { type PostgresCluster, startPostgresCluster } from "../../../support/postgres-cluster.js";
import { waitFor } from "../../../support/wait-for.js";

let cluster: PostgresCluster;
let admin: pg.Client;
let backend: PostgresBackend;

beforeAll(async () => {
  cluster = await startPostgresCluster();
  admin = new pg.Client({ connectionString: cluster.url });
  await admin.connect();
  backend = await openPostgresBackend(cluster.url, createLogSink().logger, systemClock);
}, 60_000);

afterAll(async () => {
  await backend?.close();
  await admin?.end();
  await cluster?.stop();
});

/** Sets (or, with undefined, resets) a server setting for every session. */
async function serverSetting(name: string, value: string | undefined): Promise<void> {
  await admin.query(value === undefined ? `ALTER SYSTEM RESET ${name}` : `ALTER SYSTEM SET ${name} = '${value}'`);
  await admin.query("SELECT pg_reload_conf()");
}

const writesAgain = () =>
  waitFor(() => (backend.knownWriteProblem?.() === undefined ? true : undefined), 10_000, "the write check to pass");

describe("the Postgres probe's write check", () => {
  it("writes its replica's row and passes on a server that commits", async () => {
    expect(backend.knownWriteProblem?.()).toBeUndefined();
    const rows = await admin.query("SELECT replica FROM webhook_channel.write_checks");
    expect(rows.rows).toEqual([{ replica: backend.postgres.replica }]);
  });

  it("stops writes while commits hang though reads answer, and takes them again once they commit", async () => {
    await serverSetting("synchronous_standby_names", "gone_standby");
    try {
      // Reads still answer: only a commit waits for the standby.
      expect((await admin.query("SELECT 1 AS one")).rows).toEqual([{ one: 1 }]);
      const problem = await waitFor(() => backend.knownWriteProblem?.(), 10_000, "the write check to fail");
      expect(problem).toMatch(/^postgres unreachable: no answer to a write within \d+ ms .*synchronous standby/);
      expect(backend.writeProblem()).toBe(problem);
    } finally {
      await serverSetting("synchronous_standby_names", undefined);
    }
    await writesAgain();
    expect(backend.writeProblem()).toBeUndefined();
  }, 30_000);

  it("falls back to asking whether the server takes writes when the role may not write the check's table, and says so", async () => {
    // A database an administrator migrated, run by a role granted every table but this one.
    await admin.query("CREATE ROLE probe_only LOGIN");
    await admin.query("GRANT USAGE ON SCHEMA webhook_channel TO probe_only");
    await admin.query("GRANT ALL ON ALL TABLES IN SCHEMA webhook_channel TO probe_only");
    await admin.query("GRANT ALL ON ALL SEQUENCES IN SCHEMA webhook_channel TO probe_only");
    await admin.query("REVOKE ALL ON webhook_channel.write_checks FROM probe_only");
    const url = new URL(cluster.url);
    url.username = "probe_only";
    const sink = createLogSink();
    const limited = await openPostgresBackend(url.href, sink.logger, systemClock);
    try {
      await limited.postgres.pool.query("SELECT 1");
      expect(limited.knownWriteProblem?.()).toBeUndefined();
      expect(limited.writeProblem()).toBeUndefined();
      const denied = sink.lines.filter((line) => String(line.msg).startsWith("the probe cannot write"));
      expect(denied).toHaveLength(1);
      expect(denied[0]).toMatchObject({ level: "warn", error: expect.stringMatching(/permission denied/) });
    } finally {
      await limited.close();
    }
  });

  it("stops writes on a server that turned read-only, and takes them again once it takes writes", async () => {
    await serverSetting("default_transaction_read_only", "on");
    try {
      expect(await waitFor(() => backend.knownWriteProblem?.(), 10_000, "the write check to fail")).toBe(
        "postgres is read-only (a standby, or default_transaction_read_only)",
      );
    } finally {
      await serverSetting("default_transaction_read_only", undefined);
    }
    await writesAgain();
  }, 30_000);
});
