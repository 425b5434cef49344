/**
 * A group's statement answers where each added job went and who held its lane then, read under
 * the lane row's lock, so that a replica that holds the lane places the job without a claim.
 */
import type pg from "pg";
import { describe, expect, it } from "vitest";
import { createPostgresLaneStore } from "../../../../src/node/state/postgres/postgres-lane-store.js";
import { createLogSink } from "../../../support/log-sink.js";
import { migratedDatabase, poolOn } from "./fresh-postgres.js";
import { claimTicket, jobIn, laneOf, untilOneWaitsForALock } from "./lane-tickets.js";

/** The position the jobs table gave job `id`. */
async function seqOf(pool: pg.Pool, id: string): Promise<number> {
  const rows = await pool.query<{ seq: string }>("SELECT seq FROM webhook_channel.jobs WHERE id = $1", [id]);
  return Number(rows.rows[0]?.seq ?? 0);
}

describe("the positions of added jobs", () => {
  it("names the lane's owner and epoch, and the pending job before each, in one group and across groups", async () => {
    const { pool } = await migratedDatabase();
    const store = createPostgresLaneStore(pool, "rpos", createLogSink().logger);
    const first = jobIn("c1");
    const ticket = await claimTicket(pool, "rpos", first);
    await store.add(first);
    // Two of one conversation in one group, and one of a conversation no lane row names yet.
    const second = jobIn("c1");
    const third = jobIn("c1");
    const unclaimed = jobIn("c2");
    await Promise.all([store.add(second), store.add(third), store.add(unclaimed)]);

    const [firstSeq, secondSeq, thirdSeq] = await Promise.all(
      [first, second, third].map((job) => seqOf(pool, job.message.id)),
    );
    expect(store.takePosition(first.message.id)).toEqual({
      owner: "rpos",
      epoch: ticket.epoch,
      seq: firstSeq,
      prev: 0,
      prevId: "",
    });
    expect(store.takePosition(second.message.id)).toEqual({
      owner: "rpos",
      epoch: ticket.epoch,
      seq: secondSeq,
      prev: firstSeq,
      prevId: first.message.id,
    });
    expect(store.takePosition(third.message.id)).toMatchObject({
      seq: thirdSeq,
      prev: secondSeq,
      prevId: second.message.id,
    });
    expect(store.takePosition(unclaimed.message.id)).toMatchObject({ owner: null, epoch: 0, prev: 0 });
    // Taken once: a second placing of the job claims.
    expect(store.takePosition(first.message.id)).toBeUndefined();
  });

  it("reads the lane as a claim that committed while the add waited for its lock left it", async () => {
    const { url, pool } = await migratedDatabase();
    const store = createPostgresLaneStore(pool, "rmine", createLogSink().logger);
    const job = jobIn("c1");
    const ticket = await claimTicket(pool, "rmine", job);
    // Another replica's claim holds the lane row and raises its epoch.
    const claimer = await poolOn(url).connect();
    try {
      await claimer.query("BEGIN");
      await claimer.query(
        "UPDATE webhook_channel.lanes SET owner = 'rother', epoch = epoch + 1 WHERE conversation = $1",
        [laneOf(job)],
      );
      const added = store.add(job);
      await untilOneWaitsForALock(pool, "the add to wait for the lane's lock");
      await claimer.query("COMMIT");
      await added;
    } finally {
      claimer.release();
    }
    expect(store.takePosition(job.message.id)).toMatchObject({ owner: "rother", epoch: ticket.epoch + 1 });
  });
});
