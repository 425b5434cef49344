import type pg from "pg";
import { describe, expect, it } from "vitest";
import { systemClock } from "../../../../src/core/clock.js";
import { openPostgresBackend } from "../../../../src/node/state/postgres/postgres-backend.js";
import { forgetIdlePostgresLanes } from "../../../../src/node/state/postgres/postgres-idle-lanes.js";
import { migratePostgres } from "../../../../src/node/state/postgres/postgres-migrations.js";
import {
  POSTGRES_MIGRATIONS,
  POSTGRES_SCHEMA_VERSION,
} from "../../../../src/node/state/postgres/postgres-schema-steps.js";
import { createLogSink } from "../../../support/log-sink.js";
import { waitFor } from "../../../support/wait-for.js";
import { emptyDatabase, migratedDatabase, poolOn } from "./fresh-postgres.js";

/** A database as webhook-channel with schema version 1 left it: its URL and a pool on it. */
async function versionOneDatabase(): Promise<{ url: string; pool: pg.Pool }> {
  const url = await emptyDatabase();
  const pool = poolOn(url);
  const first = POSTGRES_MIGRATIONS[0];
  if (first === undefined) throw new Error("no migration");
  await pool.query(`CREATE SCHEMA webhook_channel;
    CREATE TABLE webhook_channel.schema_migrations (version int PRIMARY KEY, description text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now());
    ${first.sql}
    INSERT INTO webhook_channel.schema_migrations (version, description) VALUES (1, 'v1');`);
  return { url, pool };
}

/** A database as webhook-channel with schema version `version` left it. */
async function databaseAt(version: number): Promise<pg.Pool> {
  const pool = poolOn(await emptyDatabase());
  await pool.query(`CREATE SCHEMA webhook_channel;
    CREATE TABLE webhook_channel.schema_migrations (version int PRIMARY KEY, description text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now());`);
  // Released steps never change: running those up to `version` writes that layout.
  for (const step of POSTGRES_MIGRATIONS.filter((entry) => entry.version <= version)) {
    await pool.query(step.sql);
    await pool.query("INSERT INTO webhook_channel.schema_migrations (version, description) VALUES ($1, $2)", [
      step.version,
      step.description,
    ]);
  }
  return pool;
}

/** The definitions of the indexes on the turns table, by name. */
async function turnIndexes(pool: pg.Pool): Promise<Record<string, string>> {
  const rows = await pool.query<{ indexname: string; indexdef: string }>(
    "SELECT indexname, indexdef FROM pg_indexes WHERE schemaname = 'webhook_channel' AND tablename = 'turns'",
  );
  return Object.fromEntries(rows.rows.map((row) => [row.indexname, row.indexdef]));
}

describe("Postgres schema migrations", () => {
  it("run once when five backends open the same empty database at once", async () => {
    const url = await emptyDatabase();
    const backends = await Promise.all(
      [1, 2, 3, 4, 5].map(() => openPostgresBackend(url, createLogSink().logger, systemClock)),
    );
    try {
      const pool = poolOn(url);
      const applied = await pool.query<{ version: number; description: string }>(
        "SELECT version, description FROM webhook_channel.schema_migrations ORDER BY version",
      );
      expect(applied.rows).toEqual(POSTGRES_MIGRATIONS.map(({ version, description }) => ({ version, description })));
      const tables = await pool.query<{ name: string }>(
        "SELECT table_name AS name FROM information_schema.tables WHERE table_schema = 'webhook_channel' ORDER BY 1",
      );
      expect(tables.rows.map((row) => row.name)).toEqual([
        "auth_failures",
        "brain_pauses",
        "dead_letters",
        "idempotency",
        "jobs",
        "lanes",
        "receivers",
        "replicas",
        "schema_migrations",
        "timeline",
        "timeline_activity",
        "turns",
        "write_checks",
      ]);
    } finally {
      await Promise.all(backends.map((backend) => backend.close()));
    }
  });

  it("leave an up-to-date database as it is", async () => {
    const { pool } = await migratedDatabase();
    expect(await migratePostgres(pool)).toBe(POSTGRES_SCHEMA_VERSION);
    const applied = await pool.query("SELECT version FROM webhook_channel.schema_migrations");
    expect(applied.rowCount).toBe(POSTGRES_SCHEMA_VERSION);
  });

  it("refuse a database written by a newer webhook-channel, changing nothing", async () => {
    const { url, pool } = await migratedDatabase();
    const newer = POSTGRES_SCHEMA_VERSION + 1;
    await pool.query("INSERT INTO webhook_channel.schema_migrations (version, description) VALUES ($1, 'future')", [
      newer,
    ]);
    await expect(migratePostgres(pool)).rejects.toThrow(
      `schema version ${newer}, but this webhook-channel supports up to version ${POSTGRES_SCHEMA_VERSION}`,
    );
    await expect(openPostgresBackend(url, createLogSink().logger, systemClock)).rejects.toThrow(
      /upgrade webhook-channel/,
    );
    const applied = await pool.query("SELECT version FROM webhook_channel.schema_migrations");
    expect(applied.rowCount).toBe(POSTGRES_SCHEMA_VERSION + 1);
  });

  it("carry each conversation's last reply number from version 1 into its lane, owned by nobody", async () => {
    const { pool } = await versionOneDatabase();
    await pool.query(`INSERT INTO webhook_channel.sequences (conversation, last) VALUES ('7:webhook:a', 4), ('3:sms:b', 9);
      INSERT INTO webhook_channel.replicas (id, lease_until) VALUES ('gone', now() - interval '1 minute');
      INSERT INTO webhook_channel.lanes (conversation, channel, owner) VALUES ('7:webhook:a', 'webhook', 'gone');`);
    expect(await migratePostgres(pool)).toBe(POSTGRES_SCHEMA_VERSION);
    const lanes = await pool.query<{ conversation: string; channel: string; owner: string | null; last_seq: string }>(
      "SELECT conversation, channel, owner, last_seq FROM webhook_channel.lanes ORDER BY conversation",
    );
    expect(lanes.rows).toEqual([
      { conversation: "3:sms:b", channel: "sms", owner: null, last_seq: "9" },
      { conversation: "7:webhook:a", channel: "webhook", owner: "gone", last_seq: "4" },
    ]);
  });

  it("index the turns by time from version 6, keeping them, while a replica of the older code runs", async () => {
    const pool = await databaseAt(6);
    await pool.query(`INSERT INTO webhook_channel.turns (conversation, turn, at) VALUES ('7:webhook:a', '{}', 1500);
      INSERT INTO webhook_channel.replicas (id, lease_until) VALUES ('older', now() + interval '1 hour');`);
    expect(Object.keys(await turnIndexes(pool))).not.toContain("turns_at");
    expect(await migratePostgres(pool)).toBe(POSTGRES_SCHEMA_VERSION);
    expect((await turnIndexes(pool)).turns_at).toBe("CREATE INDEX turns_at ON webhook_channel.turns USING btree (at)");
    const turns = await pool.query("SELECT conversation, at FROM webhook_channel.turns");
    expect(turns.rows).toEqual([{ conversation: "7:webhook:a", at: "1500" }]);
  });

  it("stamp the lanes nobody runs as let go at version 9, so that none is forgotten at once", async () => {
    const pool = await databaseAt(6);
    await pool.query(`INSERT INTO webhook_channel.lanes (conversation, channel, owner, last_seq) VALUES ('7:webhook:a', 'webhook', NULL, 4);
      INSERT INTO webhook_channel.replicas (id, lease_until) VALUES ('older', now() + interval '1 hour');`);
    const before = Date.now();
    expect(await migratePostgres(pool)).toBe(POSTGRES_SCHEMA_VERSION);
    expect(await forgetIdlePostgresLanes(pool, before - 1_000)).toBe(0);
    expect(await forgetIdlePostgresLanes(pool, Date.now() + 1_000)).toBe(1);
  });

  it("start the lanes' stamps afresh when version 9 is applied again after going back to the build before", async () => {
    const { pool } = await migratedDatabase();
    await pool.query(`INSERT INTO webhook_channel.lanes (conversation, channel, owner, last_seq, used_at)
      VALUES ('7:webhook:a', 'webhook', NULL, 4, now() - interval '40 days')`);
    // Back to the build before (deployment.md): its row deleted, the column left, never stamped.
    await pool.query("DELETE FROM webhook_channel.schema_migrations WHERE version = 9");
    expect(await migratePostgres(pool)).toBe(POSTGRES_SCHEMA_VERSION);
    expect(await forgetIdlePostgresLanes(pool, Date.now() - 30 * 86_400_000)).toBe(0);
  });

  it("take their tables in the order a replica's statements do, so that one of the older code writing meanwhile is not deadlocked", async () => {
    const pool = await databaseAt(7);
    const older = await pool.connect();
    try {
      // An older replica's grouped statement: the lanes first, then the idempotency keys.
      await older.query("BEGIN");
      await older.query("LOCK TABLE webhook_channel.lanes IN ROW EXCLUSIVE MODE");
      const migrating = migratePostgres(pool);
      migrating.catch(() => undefined);
      await waitFor(
        async () => {
          const waiting = await pool.query<{ n: number }>(
            `SELECT count(*)::int AS n FROM pg_locks
             WHERE NOT granted AND database = (SELECT oid FROM pg_database WHERE datname = current_database())`,
          );
          return (waiting.rows[0]?.n ?? 0) > 0 ? true : undefined;
        },
        10_000,
        "the migration to wait for the replica's statement",
      );
      await older.query("LOCK TABLE webhook_channel.idempotency IN ROW EXCLUSIVE MODE");
      await older.query("COMMIT");
      expect(await migrating).toBe(POSTGRES_SCHEMA_VERSION);
    } finally {
      older.release();
    }
  });

  it("refuse to leave version 1 while a replica of the older code holds a live lease, naming the fix", async () => {
    const { url, pool } = await versionOneDatabase();
    await pool.query(
      "INSERT INTO webhook_channel.replicas (id, lease_until) VALUES ('old', now() + interval '1 hour')",
    );
    await expect(openPostgresBackend(url, createLogSink().logger, systemClock)).rejects.toThrow(
      /1 replica\(s\) of an older webhook-channel still run against it .*stop every replica, then start this version/,
    );
    const applied = await pool.query("SELECT version FROM webhook_channel.schema_migrations");
    expect(applied.rowCount).toBe(1);
    await pool.query("UPDATE webhook_channel.replicas SET lease_until = now() - interval '1 second'");
    expect(await migratePostgres(pool)).toBe(POSTGRES_SCHEMA_VERSION);
  });
});
