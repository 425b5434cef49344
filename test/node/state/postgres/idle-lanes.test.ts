/**
 * Forgetting an idle conversation on Postgres deletes its lane row, which also holds the claims'
 * epoch: a conversation claimed again afterwards must start above every epoch of the old row,
 * or a run left from before (a replica paused through the idle time) would pass the fence of
 * the new one. And the pass leaves alone what a replica still runs.
 */
import { describe, expect, it } from "vitest";
import { isLaneFenced } from "../../../../src/core/lifecycle/lane-store.js";
import { releaseLanes } from "../../../../src/node/replicas/lane-statements.js";
import { forgetIdlePostgresLanes } from "../../../../src/node/state/postgres/postgres-idle-lanes.js";
import { createPostgresLaneStore } from "../../../../src/node/state/postgres/postgres-lane-store.js";
import { createLogSink } from "../../../support/log-sink.js";
import { migratedDatabase } from "./fresh-postgres.js";
import { claimTicket, jobIn, laneOf } from "./lane-tickets.js";

const LATER = () => Date.now() + 60_000;

/** The lane row of `key`, or undefined once forgotten. */
async function laneRow(pool: import("pg").Pool, key: string) {
  const result = await pool.query<{ epoch: string; last_seq: string }>(
    "SELECT epoch, last_seq FROM webhook_channel.lanes WHERE conversation = $1",
    [key],
  );
  return result.rows[0];
}

describe("forgetting idle conversations on Postgres", () => {
  it("claims a forgotten conversation anew above every epoch of its old row: a run from before is fenced", async () => {
    const { pool } = await migratedDatabase();
    const store = createPostgresLaneStore(pool, "rpaused", createLogSink().logger);
    const job = jobIn("forgotten-and-back");
    await store.add(job);
    const before = await claimTicket(pool, "rpaused", job);
    await store.finish(before, job);
    await store.flush();
    await releaseLanes(pool, "rpaused", [laneOf(job)]);
    expect(await forgetIdlePostgresLanes(pool, LATER())).toBeGreaterThanOrEqual(1);
    expect(await laneRow(pool, laneOf(job))).toBeUndefined();

    const next = jobIn("forgotten-and-back");
    await store.add(next);
    const after = await claimTicket(pool, "rpaused", next);
    expect(after.epoch).toBeGreaterThan(before.epoch);
    let refusal: unknown;
    try {
      await store.hold(before, { ...next, attempts: 1 }, Date.now() + 60_000);
      await store.flush();
    } catch (error) {
      refusal = error;
    }
    expect(isLaneFenced(refusal), `expected lane_fenced, got ${String(refusal)}`).toBe(true);
    await store.flush();
  });

  it("keeps the row of a conversation a replica runs, however long ago it was claimed", async () => {
    const { pool } = await migratedDatabase();
    const store = createPostgresLaneStore(pool, "rbusy", createLogSink().logger);
    const job = jobIn("held-by-a-replica");
    await store.add(job);
    const ticket = await claimTicket(pool, "rbusy", job);
    await store.finish(ticket, job);
    await store.flush();
    // Not let go: the replica keeps a quiet conversation for a lease.
    expect(await forgetIdlePostgresLanes(pool, LATER())).toBe(0);
    expect(await laneRow(pool, laneOf(job))).toBeDefined();
  });

  it("walks the table in slices, and keeps a conversation nobody runs that has a job stored", async () => {
    const { pool } = await migratedDatabase();
    await pool.query(
      `INSERT INTO webhook_channel.lanes (conversation, channel, owner, epoch, last_seq, used_at)
       SELECT '7:webhook:c' || n, 'webhook', NULL, 1, 3, now() - interval '40 days' FROM generate_series(1, 25) n`,
    );
    // A replayed dead letter waits for its channel's room: stored, its lane run by nobody.
    const waiting = jobIn("c7");
    await pool.query(
      "INSERT INTO webhook_channel.jobs (id, channel, conversation, job, state) VALUES ($1, 'webhook', $2, $3, 'replay')",
      [waiting.message.id, laneOf(waiting), JSON.stringify(waiting)],
    );
    expect(await forgetIdlePostgresLanes(pool, Date.now() - 30 * 86_400_000, 10)).toBe(24);
    const left = await pool.query("SELECT conversation, last_seq FROM webhook_channel.lanes");
    expect(left.rows).toEqual([{ conversation: "7:webhook:c7", last_seq: "3" }]);
  });
});
