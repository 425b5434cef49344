/**
 * What expired in the shared state (idempotency keys, failed-authentication windows) is deleted
 * by every replica's hourly upkeep, in batches that each stay well within the sessions'
 * statement timeout, skipping rows another replica's batch holds.
 */
import { describe, expect, it } from "vitest";
import { openPostgresBackend } from "../../../../src/node/state/postgres/postgres-backend.js";
import { pruneIdempotencyKeys } from "../../../../src/node/state/postgres/postgres-idempotency-store.js";
import { createLogSink } from "../../../support/log-sink.js";
import { migratedDatabase } from "./fresh-postgres.js";

const NOW = 1_800_000_000_000;

describe("the Postgres state's expired rows", () => {
  it("deletes every expired idempotency key in batches and keeps the live ones", async () => {
    const { pool } = await migratedDatabase();
    await pool.query(
      `INSERT INTO webhook_channel.idempotency (channel, key, message_id, conversation_id, committed, expires_at)
       SELECT 'webhook', 'old-' || n, 'm-' || n, 'c', true, $1::bigint - n FROM generate_series(1, 25) n
       UNION ALL SELECT 'webhook', 'live', 'm-live', 'c', true, $1::bigint + 1000`,
      [NOW],
    );
    expect(await pruneIdempotencyKeys(pool, NOW, 10)).toBe(25);
    const left = await pool.query("SELECT key FROM webhook_channel.idempotency");
    expect(left.rows).toEqual([{ key: "live" }]);
  });

  it("skips a key another session holds (a claim taking it again) rather than wait for it", async () => {
    const { pool } = await migratedDatabase();
    await pool.query(
      `INSERT INTO webhook_channel.idempotency (channel, key, message_id, conversation_id, committed, expires_at)
       SELECT 'webhook', 'old-' || n, 'm-' || n, 'c', true, $1::bigint - n FROM generate_series(1, 3) n`,
      [NOW],
    );
    const claim = await pool.connect();
    try {
      await claim.query("BEGIN");
      await claim.query("SELECT 1 FROM webhook_channel.idempotency WHERE key = 'old-2' FOR UPDATE");
      // Answers while the row is held: the other two go, the held one stays for the next run.
      expect(await pruneIdempotencyKeys(pool, NOW, 10)).toBe(2);
      await claim.query("ROLLBACK");
    } finally {
      claim.release();
    }
    const left = await pool.query("SELECT key FROM webhook_channel.idempotency");
    expect(left.rows).toEqual([{ key: "old-2" }]);
  });

  it("is what the backend's pruneExpired runs, with the failed-authentication windows", async () => {
    const { url, pool } = await migratedDatabase();
    await pool.query(
      `INSERT INTO webhook_channel.idempotency (channel, key, message_id, conversation_id, committed, expires_at)
       VALUES ('webhook', 'old', 'm', 'c', true, $1 - 1);
       INSERT INTO webhook_channel.auth_failures (key, times, expires_at) VALUES ('old-window', '{1}', $1 - 1)`.replace(
        /\$1/g,
        String(NOW),
      ),
    );
    const backend = await openPostgresBackend(url, createLogSink().logger, { now: () => NOW }, "rprune");
    try {
      expect(await backend.pruneExpired(NOW)).toBe(2);
    } finally {
      await backend.close();
    }
  });
});
