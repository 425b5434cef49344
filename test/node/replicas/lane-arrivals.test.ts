/**
 * Where a job a replica stored runs, from what its add read of the conversation's row: a
 * conversation this replica claimed after the add committed (its claim waited for the add's lock)
 * stays this replica's, though the add told the owner it named then; and a live owner the add
 * did not tell is told by a statement of its own.
 */
import type pg from "pg";
import { describe, expect, it } from "vitest";
import { silentLogger } from "../../../src/core/log/logger.js";
import { createJobQueue } from "../../../src/node/queue/job-queue.js";
import { createKeyChains } from "../../../src/node/replicas/key-chains.js";
import { createLaneArrivals } from "../../../src/node/replicas/lane-arrivals.js";
import { createLaneLoader } from "../../../src/node/replicas/lane-loader.js";
import { type ClaimRequest, claimLanes, notifyOwners } from "../../../src/node/replicas/lane-statements.js";
import { OwnedLanes } from "../../../src/node/replicas/owned-lanes.js";
import type { AddedPosition } from "../../../src/node/state/postgres/added-positions.js";
import { readNotice } from "../../../src/node/state/postgres/job-notices.js";
import {
  createPostgresLaneStore,
  type PostgresLaneStore,
} from "../../../src/node/state/postgres/postgres-lane-store.js";
import { waitFor } from "../../support/wait-for.js";
import { migratedDatabase, notificationQueueAt, poolOn } from "../state/postgres/fresh-postgres.js";
import {
  claimTicket,
  jobIn,
  laneOf,
  liveOwnerListening,
  untilOneWaitsForALock,
} from "../state/postgres/lane-tickets.js";

/**
 * Replica "rhere" over `pool`: its lanes, a queue of channel "webhook" that runs nothing, and the
 * arrivals. Each position the arrivals take (once per job) is also pushed to `taken`.
 */
function replicaHere(
  pool: pg.Pool,
  store: PostgresLaneStore,
  takeover: boolean,
  taken: (AddedPosition | undefined)[] = [],
) {
  const claim = async (request: ClaimRequest) => {
    const [answer] = await claimLanes(pool, "rhere", takeover, [request]);
    if (answer === undefined) throw new Error("no answer");
    return answer;
  };
  const queue = createJobQueue({ capacity: 10, logger: silentLogger, run: () => new Promise(() => undefined) });
  const loader = createLaneLoader(pool, () => new Map([["webhook", queue]]), silentLogger);
  const owned = new OwnedLanes(store, loader);
  const chains = createKeyChains();
  const arrivals = createLaneArrivals({
    owned,
    loader,
    claim,
    notify: async (notice) => {
      await notifyOwners(pool, [notice]);
      return true;
    },
    serial: (key, step) => chains.run(key, step),
    isStopped: () => false,
    replica: "rhere",
    position: (id) => {
      const position = store.takePosition(id);
      taken.push(position);
      return position;
    },
  });
  return { claim, queue, owned, arrivals };
}

describe("placing a job from its add's position", () => {
  it("keeps a conversation claimed here after the add, though the add told the owner it named", async () => {
    const { pool } = await migratedDatabase();
    await pool.query(
      "INSERT INTO webhook_channel.replicas (id, lease_until) VALUES ('rold', now() + interval '1 minute')",
    );
    const job = jobIn("taken");
    const before = await claimTicket(pool, "rold", job);
    const store = createPostgresLaneStore(pool, "rhere", silentLogger);
    await store.add(job);

    // The owner's lease runs out; this replica's sweep takes the conversation over before the
    // job is placed (the claim waited for the add's commit, and reads the job).
    await pool.query("UPDATE webhook_channel.replicas SET lease_until = now() - interval '1 second'");
    const { claim, queue, owned, arrivals } = replicaHere(pool, store, true);
    const taken = await claim({ conversation: laneOf(job), channel: "webhook", jobId: "", reclaim: true });
    expect(taken).toMatchObject({ mine: true, epoch: before.epoch + 1 });
    const lane = owned.own(laneOf(job), taken);
    await owned.readOn(laneOf(job), "webhook", lane);
    expect(queue.knows(job.message.id)).toBe(true);

    expect(await arrivals.place(job)).not.toBe("elsewhere");
    expect(owned.get(laneOf(job))).toMatchObject({ epoch: before.epoch + 1 });
    expect(queue.size).toBe(1);
    await queue.drain(0);
  });

  it("tells a live owner in a statement of its own when the add did not (the notification queue past its bound)", async () => {
    const { url, pool: setup } = await migratedDatabase();
    await notificationQueueAt(url, setup, 0.9);
    const pool = poolOn(url);
    const { listener, heard } = await liveOwnerListening(url, pool, "rowner");
    try {
      await claimTicket(pool, "rowner", jobIn("busy"));
      const store = createPostgresLaneStore(pool, "rhere", silentLogger);
      const job = jobIn("busy");
      await store.add(job);

      const { queue, arrivals } = replicaHere(pool, store, false);
      expect(await arrivals.place(job)).toBe("elsewhere");
      const notice = await waitFor(() => heard[0], 5_000, "the owner's notification");
      expect(readNotice(notice)).toMatchObject({ conversation: laneOf(job), id: job.message.id });
      expect(queue.size).toBe(0);
    } finally {
      await listener.end();
    }
  });

  it("places a job its replica already read past, from an add a concurrent write made inexact, without reading it again", async () => {
    const { pool } = await migratedDatabase();
    const store = createPostgresLaneStore(pool, "rhere", silentLogger);
    const taken: (AddedPosition | undefined)[] = [];
    const { claim, queue, owned, arrivals } = replicaHere(pool, store, false, taken);
    const job = jobIn("raced");
    const answer = await claim({ conversation: laneOf(job), channel: "webhook", jobId: "", reclaim: true });
    expect(answer.mine).toBe(true);
    const lane = owned.own(laneOf(job), answer);

    // Another statement holds the lane row while the add takes its snapshot, then writes the row
    // and commits: the add's lock reads a row version its snapshot lacks, so its position cannot
    // say which job comes before this one.
    const other = await pool.connect();
    let adding: Promise<void> | undefined;
    try {
      await other.query("BEGIN");
      await other.query("SELECT 1 FROM webhook_channel.lanes WHERE conversation = $1 FOR NO KEY UPDATE", [laneOf(job)]);
      adding = store.add(job);
      await untilOneWaitsForALock(pool, "the add waiting for the lane row");
      await other.query("UPDATE webhook_channel.lanes SET last_seq = last_seq WHERE conversation = $1", [laneOf(job)]);
      await other.query("COMMIT");
    } finally {
      other.release();
    }
    await adding;

    // A read of the lane (a notice of a later job, a sweep) passes the job before it is placed.
    await owned.readOn(laneOf(job), "webhook", lane);
    expect(queue.knows(job.message.id)).toBe(true);

    expect(await arrivals.place(job)).toBe("here");
    expect(taken).toEqual([expect.objectContaining({ owner: "rhere", epoch: answer.epoch, exact: false })]);
    expect(lane.upTo).toBeGreaterThanOrEqual(taken[0]?.seq ?? Number.POSITIVE_INFINITY);
    expect(queue.size).toBe(1);
    await queue.drain(0);
  });
});
