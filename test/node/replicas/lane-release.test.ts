/**
 * Giving up an idle conversation: released when it has no stored job, kept when a job was stored
 * meanwhile, also one whose add held the lane row while the release waited for its lock (that
 * add may have told this replica of the job, which the release's snapshot lacks).
 */
import { describe, expect, it } from "vitest";
import { leaveReplicas, releaseLanes } from "../../../src/node/replicas/lane-statements.js";
import { migratedDatabase, poolOn } from "../state/postgres/fresh-postgres.js";
import { claimTicket, holdAnAdd, jobIn, laneOf, untilOneWaitsForALock } from "../state/postgres/lane-tickets.js";

describe("giving up a conversation", () => {
  it("releases one with no stored job, keeps one with a job, and answers gone for one it does not run", async () => {
    const { pool } = await migratedDatabase();
    const idle = jobIn("idle");
    const busy = jobIn("busy");
    const foreign = jobIn("foreign");
    await claimTicket(pool, "rowner", idle);
    await claimTicket(pool, "rowner", busy);
    await claimTicket(pool, "rother", foreign);
    await pool.query(
      "INSERT INTO webhook_channel.jobs (id, channel, conversation, job, stored_by) VALUES ($1, $2, $3, $4, 'rowner')",
      [busy.message.id, busy.message.channel, laneOf(busy), JSON.stringify(busy)],
    );

    expect(await releaseLanes(pool, "rowner", [laneOf(idle), laneOf(busy), laneOf(foreign)])).toEqual([
      "released",
      "kept",
      "gone",
    ]);
    const owners = await pool.query<{ conversation: string; owner: string | null }>(
      "SELECT conversation, owner FROM webhook_channel.lanes ORDER BY conversation",
    );
    expect(Object.fromEntries(owners.rows.map((row) => [row.conversation, row.owner]))).toEqual({
      [laneOf(busy)]: "rowner",
      [laneOf(foreign)]: "rother",
      [laneOf(idle)]: null,
    });
  });

  it("keeps one whose row another replica's add wrote while the release waited for its lock", async () => {
    const { url, pool } = await migratedDatabase();
    const job = jobIn("c1");
    await claimTicket(pool, "rowner", job);
    // What another replica's add does, held open: its job, and the lane row written under its lock.
    const adder = await holdAnAdd(poolOn(url), job, "rother");
    try {
      const released = releaseLanes(pool, "rowner", [laneOf(job)]);
      await untilOneWaitsForALock(pool, "the release to wait for the lane's lock");
      await adder.commit();
      expect(await released).toEqual(["kept"]);
    } finally {
      adder.release();
    }
    const owner = await pool.query<{ owner: string | null }>("SELECT owner FROM webhook_channel.lanes");
    expect(owner.rows[0]?.owner).toBe("rowner");
  });

  it("leaves a stopping replica's conversation named after it when an add wrote its row while the leave waited", async () => {
    const { url, pool } = await migratedDatabase();
    await pool.query(
      "INSERT INTO webhook_channel.replicas (id, lease_until) VALUES ('rowner', now() + interval '1 minute')",
    );
    const job = jobIn("told");
    const quiet = jobIn("quiet");
    await claimTicket(pool, "rowner", job);
    await claimTicket(pool, "rowner", quiet);
    const adder = await holdAnAdd(poolOn(url), job, "rother");
    try {
      const left = leaveReplicas(pool, "rowner");
      await untilOneWaitsForALock(pool, "the leave to wait for the lane's lock");
      await adder.commit();
      await left;
    } finally {
      adder.release();
    }
    // Named after the replica that left, marked gone: another replica's sweep takes it over.
    const owners = await pool.query<{ conversation: string; owner: string | null }>(
      "SELECT conversation, owner FROM webhook_channel.lanes",
    );
    expect(Object.fromEntries(owners.rows.map((row) => [row.conversation, row.owner]))).toEqual({
      [laneOf(job)]: "rowner",
      [laneOf(quiet)]: null,
    });
    const gone = await pool.query<{ gone: boolean }>("SELECT gone FROM webhook_channel.replicas WHERE id = 'rowner'");
    expect(gone.rows[0]?.gone).toBe(true);
  });
});
