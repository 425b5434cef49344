/**
 * The `fingerprint` of an `Idempotency-Key` (schema version 8) beside replicas of the build
 * before, which neither read nor write it, and after a database was taken back to that build.
 */
import type pg from "pg";
import { beforeAll, describe, expect, it } from "vitest";
import { createPostgresIdempotencyStore } from "../../../../src/node/state/postgres/postgres-idempotency-store.js";
import { migratePostgres } from "../../../../src/node/state/postgres/postgres-migrations.js";
import { POSTGRES_SCHEMA_VERSION } from "../../../../src/node/state/postgres/postgres-schema-steps.js";
import { migratedDatabase } from "./fresh-postgres.js";

let pool: pg.Pool;

beforeAll(async () => {
  ({ pool } = await migratedDatabase());
});

describe("Idempotency-Key fingerprints beside the build before them", () => {
  it("a key an older replica moved to another message answers any body, not the first message's", async () => {
    const keys = createPostgresIdempotencyStore(pool);
    const key = `key-${crypto.randomUUID()}`;
    const first = { messageId: crypto.randomUUID(), conversationId: "c1", fingerprint: "first-body" };
    const now = Date.now();
    expect(await keys.reserve("webhook", key, first, now)).toBeUndefined();
    // The older build's claim of the key once its lease ran out: every column but the fingerprint.
    await pool.query(
      `UPDATE webhook_channel.idempotency SET message_id = $3, conversation_id = 'c2', committed = false, expires_at = $4
       WHERE channel = $1 AND key = $2`,
      ["webhook", key, "older-message", now + 60_000],
    );
    const other = { messageId: crypto.randomUUID(), conversationId: "c3", fingerprint: "other-body" };
    expect(await keys.reserve("webhook", key, other, now + 1)).toEqual({
      record: { messageId: "older-message", conversationId: "c2" },
      committed: false,
    });
  });

  it("brings a database taken back to the build before (version 8's row deleted, the column kept) up again", async () => {
    await pool.query("DELETE FROM webhook_channel.schema_migrations WHERE version = 8");
    expect(await migratePostgres(pool)).toBe(POSTGRES_SCHEMA_VERSION);
  });
});
