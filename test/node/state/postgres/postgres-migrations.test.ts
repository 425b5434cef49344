import { describe, expect, it } from "vitest";
import { systemClock } from "../../../../src/core/clock.js";
import { openPostgresBackend } from "../../../../src/node/state/postgres/postgres-backend.js";
import {
  migratePostgres,
  POSTGRES_MIGRATIONS,
  POSTGRES_SCHEMA_VERSION,
} from "../../../../src/node/state/postgres/postgres-migrations.js";
import { createLogSink } from "../../../support/log-sink.js";
import { emptyDatabase, migratedDatabase, poolOn } from "./fresh-postgres.js";

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
        "turns",
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
});
