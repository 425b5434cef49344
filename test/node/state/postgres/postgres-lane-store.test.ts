/** What the Postgres lane store does beyond the contract: grouping, the fence, claims and numbers. */
import { describe, expect, it, vi } from "vitest";
import type { Job } from "../../../../src/core/lifecycle/job.js";
import { isLaneFenced } from "../../../../src/core/lifecycle/lane-store.js";
import { jobsAfter } from "../../../../src/node/replicas/lane-reads.js";
import { claimLanes } from "../../../../src/node/replicas/lane-statements.js";
import { createPostgresLaneStore } from "../../../../src/node/state/postgres/postgres-lane-store.js";
import { createLogSink } from "../../../support/log-sink.js";
import { migratedDatabase, poolOn } from "./fresh-postgres.js";
import { claimTicket, jobIn as job, laneOf, storedJob, storedLastSequence } from "./lane-tickets.js";

const withReplies = (of: Job, sequences: number[]): Job => ({
  ...of,
  replies: sequences.map((sequence) => ({ id: crypto.randomUUID(), sequence, body: "{}" })),
});

describe("Postgres lane store", () => {
  it("writes the adds, the saves and the finishes of one event-loop turn in one statement each", async () => {
    const { pool } = await migratedDatabase();
    const store = createPostgresLaneStore(pool, "rgroup", createLogSink().logger);
    const jobs = Array.from({ length: 500 }, (_, index) => {
      const added = job(`conversation-${index % 7}`);
      return { ...added, message: { ...added.message, idempotencyKey: `key-${index}` } };
    });
    const tickets = new Map<string, Awaited<ReturnType<typeof claimTicket>>>();
    for (const added of jobs.slice(0, 7)) tickets.set(laneOf(added), await claimTicket(pool, "rgroup", added));
    const ticketOf = (of: Job) => {
      const ticket = tickets.get(laneOf(of));
      if (ticket === undefined) throw new Error("no ticket");
      return ticket;
    };
    const query = vi.spyOn(pool, "query");
    await Promise.all(jobs.map((added) => store.add(added)));
    expect(query).toHaveBeenCalledTimes(1);

    query.mockClear();
    await Promise.all(jobs.slice(0, 250).map((added) => store.save(ticketOf(added), { ...added, attempts: 1 })));
    expect(query).toHaveBeenCalledTimes(1);
    query.mockClear();
    await Promise.all(jobs.slice(250).map((added) => store.finish(ticketOf(added), added)));
    expect(query).toHaveBeenCalledTimes(1);
    query.mockRestore();

    const counts = await pool.query<{ jobs: number; keys: number; committed: number }>(
      `SELECT (SELECT count(*)::int FROM webhook_channel.jobs) AS jobs,
              (SELECT count(*)::int FROM webhook_channel.idempotency) AS keys,
              (SELECT count(*)::int FROM webhook_channel.idempotency WHERE committed) AS committed`,
    );
    expect(counts.rows[0]).toEqual({ jobs: 250, keys: 500, committed: 500 });
  });

  it("refuses, in one group, only the writes of the lane another replica claimed", async () => {
    const { pool } = await migratedDatabase();
    const store = createPostgresLaneStore(pool, "rmine", createLogSink().logger);
    const kept = job("kept");
    const lost = job("lost");
    await Promise.all([store.add(kept), store.add(lost)]);
    const [keptTicket, lostTicket] = [await claimTicket(pool, "rmine", kept), await claimTicket(pool, "rmine", lost)];
    await claimTicket(pool, "rother", lost);
    const [savedKept, savedLost] = await Promise.allSettled([
      store.save(keptTicket, withReplies(kept, [1]), { turns: [{ role: "user", text: "hi", at: 1 }] }),
      store.save(lostTicket, withReplies(lost, [1]), { turns: [{ role: "user", text: "hi", at: 1 }] }),
    ]);
    expect(savedKept.status).toBe("fulfilled");
    expect(savedLost.status === "rejected" && isLaneFenced(savedLost.reason)).toBe(true);
    expect((await storedJob(pool, kept.message.id))?.replies).toHaveLength(1);
    expect((await storedJob(pool, lost.message.id))?.replies).toBeUndefined();
    expect(await storedLastSequence(pool, laneOf(kept))).toBe(1);
    expect(await storedLastSequence(pool, laneOf(lost))).toBe(0);
  });

  it("a claim waits for a write that holds the lane, then starts from the number it wrote", async () => {
    const { url, pool } = await migratedDatabase();
    const first = job("contended");
    const ticket = await claimTicket(pool, "rslow", first);
    // The slow replica's write, caught between its fence and its commit.
    const writer = await poolOn(url).connect();
    await writer.query("BEGIN");
    await writer.query("UPDATE webhook_channel.lanes SET last_seq = 7 WHERE conversation = $1 AND epoch = $2", [
      ticket.key,
      ticket.epoch,
    ]);
    const claimed = claimLanes(poolOn(url), "rfast", true, [
      { conversation: ticket.key, channel: "webhook", jobId: "", reclaim: true },
    ]);
    const waited = await Promise.race([
      claimed.then(() => false),
      new Promise((resolve) => setTimeout(() => resolve(true), 300)),
    ]);
    expect(waited).toBe(true);
    await writer.query("COMMIT");
    writer.release();
    const [answer] = await claimed;
    expect(answer).toMatchObject({ mine: true, epoch: ticket.epoch + 1, lastSequence: 7 });
  });

  it("reads a lane's jobs back in acceptance order after a claim, without those finished", async () => {
    const { pool } = await migratedDatabase();
    const store = createPostgresLaneStore(pool, "rorder", createLogSink().logger);
    const conversation = `conversation-${crypto.randomUUID()}`;
    const jobs = ["one", "two", "three", "four"].map((text) => job(conversation, text));
    // Two turns, and the first job finished in between.
    await Promise.all(jobs.slice(0, 2).map((added) => store.add(added)));
    await Promise.all([...jobs.slice(2).map((added) => store.add(added)), store.add(job("other"))]);
    const first = jobs[0];
    if (first === undefined) throw new Error("no job");
    await store.finish(await claimTicket(pool, "rorder", first), first);
    const [lane] = await jobsAfter(pool, [{ conversation: laneOf(first), after: 0, limit: 100 }]);
    expect(lane?.map((stored) => stored.job.message.message.text)).toEqual(["two", "three", "four"]);
  });

  it("keeps every character of a message, its replies and its turns as sent", async () => {
    const { pool } = await migratedDatabase();
    const store = createPostgresLaneStore(pool, "rtext", createLogSink().logger);
    const text =
      'quotes " and \\" , backslash \\ , {braces}, NUL \u0000, record separator \u001e, tab \t, line\nbreak, ü, 🦆, lone \ud800';
    const added = job(`conversation-${crypto.randomUUID()}`, text);
    await store.add(added);
    expect((await storedJob(pool, added.message.id))?.message.message.text).toBe(text);
    const ticket = await claimTicket(pool, "rtext", added);
    const answered = { ...added, replies: [{ id: crypto.randomUUID(), sequence: 1, body: JSON.stringify({ text }) }] };
    await store.save(ticket, answered, { turns: [{ role: "assistant", text, at: 1 }] });
    expect((await storedJob(pool, added.message.id))?.replies?.[0]?.body).toBe(JSON.stringify({ text }));
    const turns = await pool.query<{ turn: string }>("SELECT turn FROM webhook_channel.turns WHERE conversation = $1", [
      laneOf(added),
    ]);
    expect(turns.rows.map((row) => (JSON.parse(row.turn) as { text?: string }).text)).toEqual([text]);
  });

  it("moves the lane's last number with the replies' write; a replica that claims it next starts after it", async () => {
    const { url, pool } = await migratedDatabase();
    const store = createPostgresLaneStore(pool, "rnumbers", createLogSink().logger);
    const first = job("numbered");
    await store.add(first);
    const ticket = await claimTicket(pool, "rnumbers", first);
    expect(await store.lastSequence(ticket)).toBe(0);
    await store.save(ticket, withReplies(first, [1, 2]), { turns: [] });
    expect(await store.lastSequence(ticket)).toBe(2);
    // Another replica takes the conversation over and numbers 3 to 5; this replica's ticket is stale.
    const elsewhere = createPostgresLaneStore(poolOn(url), "relse", createLogSink().logger);
    const taken = await claimTicket(pool, "relse", first);
    expect(await elsewhere.lastSequence(taken)).toBe(2);
    await elsewhere.save(taken, withReplies(first, [3, 4, 5]), { turns: [] });
    await expect(store.save(ticket, withReplies(first, [3]), { turns: [] })).rejects.toMatchObject({
      code: "lane_fenced",
    });
    expect(await storedLastSequence(pool, laneOf(first))).toBe(5);
  });

  it("flush waits for writes under way", async () => {
    const { pool } = await migratedDatabase();
    const store = createPostgresLaneStore(pool, "rflush", createLogSink().logger);
    const jobs = Array.from({ length: 20 }, () => job("flushed"));
    const added = Promise.all(jobs.map((queued) => store.add(queued)));
    await store.flush();
    const stored = await pool.query<{ n: number }>("SELECT count(*)::int AS n FROM webhook_channel.jobs");
    expect(stored.rows[0]?.n).toBe(20);
    await added;
  });
});
