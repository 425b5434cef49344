/**
 * A replica's write (its fence) and another replica's claim lock the same lanes: both take them
 * in the database's order, whatever the database's collation, so that neither waits in a cycle.
 */
import pg from "pg";
import { describe, expect, inject, it } from "vitest";
import { createPostgresLaneStore } from "../../../../src/node/state/postgres/postgres-lane-store.js";
import { migratePostgres } from "../../../../src/node/state/postgres/postgres-migrations.js";
import { createLogSink } from "../../../support/log-sink.js";
import { poolOn } from "./fresh-postgres.js";
import { claimTicket, jobIn as job, laneOf, untilOneWaitsForALock } from "./lane-tickets.js";

/** A database whose text order is ICU's en-US, where "a" sorts before "B" (bytewise, after it). */
async function icuDatabase(): Promise<string> {
  const name = `wc_icu_${Date.now().toString(36)}_${Math.random().toString(36).slice(2, 8)}`;
  const client = new pg.Client({ connectionString: inject("postgresUrl") });
  await client.connect();
  try {
    await client.query(`CREATE DATABASE ${name} TEMPLATE template0 LOCALE_PROVIDER icu ICU_LOCALE 'en-US'`);
  } finally {
    await client.end();
  }
  const url = new URL(inject("postgresUrl"));
  url.pathname = `/${name}`;
  return url.toString();
}

describe("lane lock order", () => {
  it("a write's fence takes its lanes in the order a claim does, so a claim that holds the first never deadlocks it", async () => {
    const url = await icuDatabase();
    const pool = poolOn(url);
    await migratePostgres(pool);
    const store = createPostgresLaneStore(pool, "rfence", createLogSink().logger);
    // "B" first: its row is first in the table, and first bytewise; "a" is first in the database's order.
    const upper = job("B");
    const lower = job("a");
    const upperTicket = await claimTicket(pool, "rfence", upper);
    const lowerTicket = await claimTicket(pool, "rfence", lower);
    const ordered = await pool.query<{ conversation: string }>(
      "SELECT conversation FROM webhook_channel.lanes ORDER BY conversation",
    );
    expect(ordered.rows.map((row) => row.conversation)).toEqual([laneOf(lower), laneOf(upper)]);

    // Another replica's claim has locked the first lane and is about to lock the second.
    const claimer = await poolOn(url).connect();
    try {
      await claimer.query("BEGIN");
      await claimer.query("SELECT 1 FROM webhook_channel.lanes WHERE conversation = $1 FOR UPDATE", [laneOf(lower)]);
      // This replica's write of both lanes, one statement, waits for the first.
      const written = Promise.all([store.save(upperTicket, upper), store.save(lowerTicket, lower)]);
      written.catch(() => undefined);
      await untilOneWaitsForALock(pool, "the fence to wait for the first lane");
      // The second lane is free: the fence took nothing before the lane it waits for.
      await claimer.query("SET LOCAL lock_timeout = '200ms'");
      await claimer.query("SELECT 1 FROM webhook_channel.lanes WHERE conversation = $1 FOR UPDATE", [laneOf(upper)]);
      await claimer.query("COMMIT");
      await expect(written).resolves.toBeDefined();
    } finally {
      claimer.release();
    }
  });
});
