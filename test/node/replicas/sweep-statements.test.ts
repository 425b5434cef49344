/**
 * What a sweep finds of the replicas whose lease ran out, read through the indexes on a lane's
 * owner and a job's storing replica: their conversations with stored jobs, and the conversations
 * of the jobs they stored and never claimed; nothing a live replica runs.
 */
import { describe, expect, it } from "vitest";
import {
  forgetDeadReplicas,
  jobsUpTo,
  lapsedReplicas,
  markSwept,
  orphansOf,
  strayLanes,
} from "../../../src/node/replicas/sweep-statements.js";
import { createPostgresLaneStore } from "../../../src/node/state/postgres/postgres-lane-store.js";
import { createLogSink } from "../../support/log-sink.js";
import { migratedDatabase } from "../state/postgres/fresh-postgres.js";
import { claimTicket, jobIn as job, laneOf } from "../state/postgres/lane-tickets.js";

describe("the sweep's statements", () => {
  it("find what lapsed replicas left, and nothing of a live replica's, until they are swept once nothing is left", async () => {
    const { pool } = await migratedDatabase();
    await pool.query(
      `INSERT INTO webhook_channel.replicas (id, lease_until, gone) VALUES
         ('dead', now() - interval '1 minute', false),
         ('stopped', now() - interval '1 second', true),
         ('live', now() + interval '1 hour', false)`,
    );
    // Stored by "dead", never claimed: no lane row at all.
    const unclaimed = job("unclaimed");
    await createPostgresLaneStore(pool, "dead", createLogSink().logger).add(unclaimed);
    // Run by "stopped", with a stored job.
    const held = job("held");
    await createPostgresLaneStore(pool, "live", createLogSink().logger).add(held);
    await claimTicket(pool, "stopped", held);
    // Stored by "dead", but run by the live replica: not an orphan.
    const taken = job("taken");
    await createPostgresLaneStore(pool, "dead", createLogSink().logger).add(taken);
    await claimTicket(pool, "live", taken);

    expect(await lapsedReplicas(pool, false)).toEqual(["dead", "stopped"]);
    expect(await lapsedReplicas(pool, true)).toEqual(["stopped"]);
    const orphans = await orphansOf(pool, ["dead", "stopped"], ["webhook"], 100);
    expect(orphans.map((orphan) => orphan.conversation).sort()).toEqual([laneOf(held), laneOf(unclaimed)].sort());
    expect(await orphansOf(pool, ["dead", "stopped"], ["other"], 100)).toEqual([]);

    // Not swept while something of theirs is left, on any channel.
    await markSwept(pool, ["dead", "stopped", "live"]);
    expect(await lapsedReplicas(pool, false)).toEqual(["dead", "stopped"]);
    // Taken by the live replica: nothing left.
    await claimTicket(pool, "live", unclaimed);
    await claimTicket(pool, "live", held);
    await markSwept(pool, ["dead", "stopped", "live"]);
    expect(await lapsedReplicas(pool, false)).toEqual([]);
    // A replica that renews its lease is looked at again should it lapse once more.
    const live = await pool.query<{ swept: boolean }>("SELECT swept FROM webhook_channel.replicas WHERE id = 'live'");
    expect(live.rows[0]?.swept).toBe(false);
  });

  it("leaves a job a live replica stored and has yet to claim to that replica, and finds one nobody will", async () => {
    const { pool } = await migratedDatabase();
    await pool.query(
      `INSERT INTO webhook_channel.replicas (id, lease_until, gone) VALUES
         ('live', now() + interval '1 hour', false), ('dead', now() - interval '1 minute', false)`,
    );
    await createPostgresLaneStore(pool, "live", createLogSink().logger).add(job("claiming"));
    const left = job("left");
    await createPostgresLaneStore(pool, "dead", createLogSink().logger).add(left);
    const strays = await strayLanes(pool, ["webhook"], 100);
    expect(strays.map((stray) => stray.conversation)).toEqual([laneOf(left)]);
  });

  it("read the stored jobs at or below each lane's position, so that a job the owner missed is found", async () => {
    const { pool } = await migratedDatabase();
    const store = createPostgresLaneStore(pool, "live", createLogSink().logger);
    const [first, second, third] = [job("c"), job("c"), job("c")];
    for (const each of [first, second, third]) await store.add(each);
    const seqs = await pool.query<{ id: string; seq: string }>("SELECT id, seq FROM webhook_channel.jobs ORDER BY seq");
    const upTo = Number(seqs.rows[1]?.seq);
    const found = await jobsUpTo(pool, [{ conversation: laneOf(first), upTo }]);
    expect(found.map((row) => row.id).sort()).toEqual([first.message.id, second.message.id].sort());
    expect(await jobsUpTo(pool, [{ conversation: "other", upTo }])).toEqual([]);
  });

  it("forget the write checks of replicas that have written none for an hour, and keep a live one's", async () => {
    const { pool } = await migratedDatabase();
    await pool.query(
      `INSERT INTO webhook_channel.write_checks (replica, checked_at)
       VALUES ('gone', now() - interval '61 minutes'), ('live', now() - interval '59 minutes')`,
    );
    await forgetDeadReplicas(pool);
    const left = await pool.query<{ replica: string }>("SELECT replica FROM webhook_channel.write_checks");
    expect(left.rows).toEqual([{ replica: "live" }]);
  });
});
