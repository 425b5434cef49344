/**
 * An `Idempotency-Key` reserved by a request whose reserve failed without the server's word
 * that it rolled back is released once its reservation shows, so the client's retry is taken
 * instead of answered 409 `request_in_progress` for the reservation's lease; only that request's
 * reservation is released, and the tries end with the lease.
 */
import pg from "pg";
import { afterAll, describe, expect, it } from "vitest";
import { PENDING_LEASE_MS } from "../../../../src/core/idempotency/idempotency-store.js";
import { createPostgresIdempotencyStore } from "../../../../src/node/state/postgres/postgres-idempotency-store.js";
import { migratePostgres } from "../../../../src/node/state/postgres/postgres-migrations.js";
import { openPostgresPool } from "../../../../src/node/state/postgres/postgres-pool.js";
import { createUnsettledReservations } from "../../../../src/node/state/postgres/unsettled-reservations.js";
import { holdCommits, releaseCommits } from "../../../support/commit-hold.js";
import { type PostgresCluster, startPostgresCluster } from "../../../support/postgres-cluster.js";
import { waitFor } from "../../../support/wait-for.js";
import { migratedDatabase } from "./fresh-postgres.js";

const CHANNEL = "support";

/** The key's row as the database holds it now, if any. */
async function keyRow(pool: pg.Pool, key: string): Promise<{ message_id: string; committed: boolean } | undefined> {
  const result = await pool.query<{ message_id: string; committed: boolean }>(
    "SELECT message_id, committed FROM webhook_channel.idempotency WHERE channel = $1 AND key = $2",
    [CHANNEL, key],
  );
  return result.rows[0];
}

/** Inserts a reservation in a transaction of its own, left open: it shows once `commit` runs. */
async function lateReservation(url: string, key: string, messageId: string, committed = false) {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  await client.query("BEGIN");
  await client.query(
    `INSERT INTO webhook_channel.idempotency (channel, key, message_id, conversation_id, committed, expires_at)
     VALUES ($1, $2, $3, 'c', $4, $5)`,
    [CHANNEL, key, messageId, committed, Date.now() + PENDING_LEASE_MS],
  );
  return {
    commit: async () => {
      await client.query("COMMIT");
      await client.end();
    },
  };
}

describe("reservations whose reserve failed", () => {
  it("releases one that shows only after a few tries, once it does", async () => {
    const { url, pool } = await migratedDatabase();
    const unsettled = createUnsettledReservations(pool, 30_000, 50);
    const late = await lateReservation(url, "late", "m-late");
    unsettled.add(CHANNEL, "late", "m-late");
    // Tries that find nothing yet: the reservation is still on its way.
    await waitFor(() => (unsettled.tries >= 3 ? true : undefined), 5_000, "three tries", 10);
    expect(unsettled.size).toBe(1);
    await late.commit();
    await waitFor(() => (unsettled.size === 0 ? true : undefined), 5_000, "the release");
    expect(await keyRow(pool, "late")).toBeUndefined();
  });

  it("leaves another request's reservation of the key and a committed key alone, and stops at the lease", async () => {
    const { url, pool } = await migratedDatabase();
    const unsettled = createUnsettledReservations(pool, 600, 50);
    await (await lateReservation(url, "taken", "m-other")).commit();
    await (await lateReservation(url, "kept", "m-kept", true)).commit();
    unsettled.add(CHANNEL, "taken", "m-failed");
    unsettled.add(CHANNEL, "kept", "m-kept");
    expect(unsettled.size).toBe(2);
    await waitFor(() => (unsettled.size === 0 ? true : undefined), 5_000, "the lease to end the tries");
    expect(await keyRow(pool, "taken")).toEqual({ message_id: "m-other", committed: false });
    expect(await keyRow(pool, "kept")).toEqual({ message_id: "m-kept", committed: true });
  });
});

describe("reservations whose reserve failed, at shutdown", () => {
  it("are given up once the pool is ended", async () => {
    const { url } = await migratedDatabase();
    const pool = openPostgresPool(url);
    const unsettled = createUnsettledReservations(pool, 30_000, 20);
    unsettled.add(CHANNEL, "never", "m-never");
    await waitFor(() => (unsettled.tries >= 1 ? true : undefined), 5_000, "a try", 10);
    await pool.end();
    await waitFor(() => (unsettled.size === 0 ? true : undefined), 5_000, "the tries to end");
  });
});

describe("a reserve whose commit the database holds up", () => {
  let cluster: PostgresCluster | undefined;
  let admin: pg.Client | undefined;
  let pool: pg.Pool | undefined;

  afterAll(async () => {
    await pool?.end();
    await admin?.end();
    await cluster?.stop();
  });

  it("fails the request, and once the commit goes through, frees the key for the retry", async () => {
    cluster = await startPostgresCluster();
    admin = new pg.Client({ connectionString: cluster.url });
    await admin.connect();
    pool = openPostgresPool(cluster.url, { queryTimeoutMillis: 1_000 });
    await migratePostgres(pool);
    const store = createPostgresIdempotencyStore(pool);
    const record = (messageId: string) => ({ messageId, conversationId: "c" });

    await holdCommits(admin, cluster.url);
    await expect(store.reserve(CHANNEL, "held", record("m-refused"), Date.now())).rejects.toMatchObject({
      code: "state_unavailable",
    });
    await releaseCommits(admin);

    // The held reserve commits once the standby is let go (or its session ends); its request
    // was refused, so the retry must not find it pending for a minute.
    // Each retry is a request of its own (its own message id); one the hold still caught fails.
    let retries = 0;
    const taker = await waitFor(
      async () => {
        retries += 1;
        const messageId = `m-retry-${retries}`;
        const earlier = await store.reserve(CHANNEL, "held", record(messageId), Date.now()).catch(() => null);
        return earlier === undefined ? messageId : undefined;
      },
      10_000,
      "the retry to take the key",
      200,
    );
    expect(await keyRow(pool, "held")).toEqual({ message_id: taker, committed: false });
  }, 60_000);
});

describe("a release that fails", () => {
  it("is tried again, so the client's retry is not answered 409 for the reservation's lease", async () => {
    // The pool's sessions cancel a statement that waits past their statement_timeout, as one
    // meant for a database that went away is.
    const { url, pool } = await migratedDatabase();
    const store = createPostgresIdempotencyStore(pool);
    expect(await store.reserve(CHANNEL, "refused", { messageId: "m-refused", conversationId: "c" }, Date.now())).toBe(
      undefined,
    );
    // The request is refused (its message could not be queued) and its key released, while the
    // row is held: the release fails.
    const locker = new pg.Client({ connectionString: url });
    await locker.connect();
    await locker.query("BEGIN");
    await locker.query("SELECT 1 FROM webhook_channel.idempotency WHERE key = 'refused' FOR UPDATE");
    await expect(store.release(CHANNEL, "refused", "m-refused")).rejects.toMatchObject({ code: "state_unavailable" });
    await locker.query("COMMIT");
    await locker.end();
    await waitFor(
      async () => ((await keyRow(pool, "refused")) === undefined ? true : undefined),
      10_000,
      "the release",
    );
  }, 30_000);
});
