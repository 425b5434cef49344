/**
 * A group's statement answers where each added job went and who held its lane then, read under
 * the lane row's lock, so that a replica that holds the lane places the job without a claim.
 */
import type pg from "pg";
import { describe, expect, it } from "vitest";
import { readNotice } from "../../../../src/node/state/postgres/job-notices.js";
import { createPostgresLaneStore } from "../../../../src/node/state/postgres/postgres-lane-store.js";
import { createLogSink } from "../../../support/log-sink.js";
import { waitFor } from "../../../support/wait-for.js";
import { migratedDatabase, notificationQueueAt, poolOn } from "./fresh-postgres.js";
import { claimTicket, holdAnAdd, jobIn, laneOf, liveOwnerListening, untilOneWaitsForALock } from "./lane-tickets.js";

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
      exact: true,
      told: false,
    });
    expect(store.takePosition(second.message.id)).toEqual({
      owner: "rpos",
      epoch: ticket.epoch,
      seq: secondSeq,
      prev: firstSeq,
      prevId: first.message.id,
      exact: true,
      told: false,
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

  it("answers the claim's owner and epoch for a lane a claim moved while the add waited for its lock, not exact", async () => {
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
    expect(store.takePosition(job.message.id)).toMatchObject({
      owner: "rother",
      epoch: ticket.epoch + 1,
      exact: false,
      told: false,
    });
  });

  it("answers not exact when another replica added a job of the lane while the add waited, so the owner reads on", async () => {
    const { url, pool } = await migratedDatabase();
    const owner = createPostgresLaneStore(pool, "rowner", createLogSink().logger);
    const first = jobIn("c1");
    const ticket = await claimTicket(pool, "rowner", first);
    await owner.add(first);
    expect(owner.takePosition(first.message.id)).toMatchObject({ owner: "rowner", epoch: ticket.epoch });

    // Another replica's add of the conversation writes the lane row, though it does not run it.
    const version = async () =>
      (
        await pool.query<{ v: string }>("SELECT xmin::text AS v FROM webhook_channel.lanes WHERE conversation = $1", [
          laneOf(first),
        ])
      ).rows[0]?.v;
    const before = await version();
    const other = createPostgresLaneStore(poolOn(url), "rother", createLogSink().logger);
    const second = jobIn("c1");
    await other.add(second);
    expect(other.takePosition(second.message.id)).toMatchObject({ owner: "rowner", prev: expect.any(Number) });
    expect(await version()).not.toBe(before);

    // Such an add holds the lane while it commits; the owner's add waits, and its snapshot misses that job.
    const third = jobIn("c1");
    const fourth = jobIn("c1");
    const adder = await holdAnAdd(poolOn(url), third, "rother");
    try {
      const added = owner.add(fourth);
      await untilOneWaitsForALock(pool, "the owner's add to wait for the lane's lock");
      await adder.commit();
      await added;
    } finally {
      adder.release();
    }
    expect(owner.takePosition(fourth.message.id)).toMatchObject({ owner: "rowner", epoch: ticket.epoch, exact: false });
  });

  it("forgets the position a job's first add left once the job comes back as a replay", async () => {
    const { pool } = await migratedDatabase();
    const store = createPostgresLaneStore(pool, "rreplay", createLogSink().logger);
    const job = jobIn("c1");
    const ticket = await claimTicket(pool, "rreplay", job);
    // Added (its position is kept until the job is placed), then finished and replayed.
    await store.add(job);
    await store.finish(ticket, job);
    await store.flush();
    await store.restore(job);
    const replayed = await store.takeReplayed(() => 10);
    expect(replayed.map((taken) => taken.message.id)).toEqual([job.message.id]);
    expect(store.takePosition(job.message.id)).toBeUndefined();
  });

  it("tells the live replica that runs the lane where the job is, at the commit, and nobody once its lease ran out", async () => {
    const { url, pool } = await migratedDatabase();
    const { listener, heard } = await liveOwnerListening(url, pool, "rowner");
    try {
      const first = jobIn("c1");
      const ticket = await claimTicket(pool, "rowner", first);
      const other = createPostgresLaneStore(pool, "rother", createLogSink().logger);

      const told = jobIn("c1");
      await other.add(told);
      const position = other.takePosition(told.message.id);
      expect(position).toMatchObject({ owner: "rowner", epoch: ticket.epoch, told: true });
      const notice = await waitFor(() => heard[0], 5_000, "the owner's notification");
      expect(readNotice(notice)).toEqual({ conversation: laneOf(told), seq: position?.seq, id: told.message.id });

      // Its own add tells nobody.
      const owner = createPostgresLaneStore(pool, "rowner", createLogSink().logger);
      const own = jobIn("c1");
      await owner.add(own);
      expect(owner.takePosition(own.message.id)).toMatchObject({ owner: "rowner", told: false });

      // An owner whose lease ran out is not told: the job's placing claims, and may take the lane.
      await pool.query("UPDATE webhook_channel.replicas SET lease_until = now() - interval '1 second'");
      const late = jobIn("c1");
      await other.add(late);
      expect(other.takePosition(late.message.id)).toMatchObject({ owner: "rowner", told: false });
      // A notification sent by then would have come before this round trip's answer.
      await listener.query("SELECT 1");
      expect(heard).toHaveLength(1);
    } finally {
      await listener.end();
    }
  });

  it("tells nobody while the notification queue is past its bound", async () => {
    const { url, pool: setup } = await migratedDatabase();
    await notificationQueueAt(url, setup, 0.9);
    const pool = poolOn(url);
    const { listener, heard } = await liveOwnerListening(url, pool, "rowner");
    try {
      await claimTicket(pool, "rowner", jobIn("c1"));
      const other = createPostgresLaneStore(pool, "rother", createLogSink().logger);

      const job = jobIn("c1");
      await other.add(job);
      expect(other.takePosition(job.message.id)).toMatchObject({ owner: "rowner", told: false });
      await listener.query("SELECT 1");
      expect(heard).toEqual([]);
    } finally {
      await listener.end();
    }
  });
});
