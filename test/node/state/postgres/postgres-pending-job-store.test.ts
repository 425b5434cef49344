/** What the job store does beyond the contract: grouping, lanes, sequence numbers, deletes. */
import { describe, expect, it, vi } from "vitest";
import { conversationKey } from "../../../../src/core/conversation/conversation-store.js";
import type { Job } from "../../../../src/core/lifecycle/job.js";
import { jobKey } from "../../../../src/core/lifecycle/pending-job-store.js";
import { createPostgresConversationStore } from "../../../../src/node/state/postgres/postgres-conversation-store.js";
import { createPostgresPendingJobStore } from "../../../../src/node/state/postgres/postgres-pending-job-store.js";
import { createPostgresSequenceCounter } from "../../../../src/node/state/postgres/postgres-sequence-counter.js";
import { createLogSink } from "../../../support/log-sink.js";
import { migratedDatabase, poolOn } from "./fresh-postgres.js";

function job(conversationId: string, text = "hello"): Job {
  return {
    message: {
      id: crypto.randomUUID(),
      channel: "webhook",
      receivedAt: Date.now(),
      message: { senderId: "u1", conversationId, text },
    },
    delivered: 0,
    attempts: 0,
  };
}

const withReplies = (of: Job, sequences: number[]): Job => ({
  ...of,
  replies: sequences.map((sequence) => ({ id: crypto.randomUUID(), sequence, body: "{}" })),
});

describe("Postgres pending job store", () => {
  it("writes the adds of one event-loop turn, with their idempotency keys, in one statement", async () => {
    const { pool } = await migratedDatabase();
    const store = createPostgresPendingJobStore(pool, createLogSink().logger);
    const query = vi.spyOn(pool, "query");
    const jobs = Array.from({ length: 500 }, (_, index) => {
      const added = job(`conversation-${index % 7}`);
      return { ...added, message: { ...added.message, idempotencyKey: `key-${index}` } };
    });
    await Promise.all(jobs.map((added) => store.add(added)));
    expect(query).toHaveBeenCalledTimes(1);

    // The updates of a turn and the finished jobs' deletes of a turn: one statement each.
    query.mockClear();
    await Promise.all(jobs.slice(0, 250).map((added) => store.update({ ...added, attempts: 1 })));
    expect(query).toHaveBeenCalledTimes(1);
    query.mockClear();
    await Promise.all(jobs.slice(250).map((added) => store.remove(jobKey(added))));
    expect(query).toHaveBeenCalledTimes(1);
    query.mockRestore();

    const counts = await pool.query<{ jobs: number; keys: number; committed: number }>(
      `SELECT (SELECT count(*)::int FROM webhook_channel.jobs) AS jobs,
              (SELECT count(*)::int FROM webhook_channel.idempotency) AS keys,
              (SELECT count(*)::int FROM webhook_channel.idempotency WHERE committed) AS committed`,
    );
    expect(counts.rows[0]).toEqual({ jobs: 250, keys: 500, committed: 500 });
  });

  it("gives a conversation's jobs back in acceptance order, without replayed ones not yet taken", async () => {
    const { pool } = await migratedDatabase();
    const store = createPostgresPendingJobStore(pool, createLogSink().logger);
    const conversation = `conversation-${crypto.randomUUID()}`;
    const jobs = ["one", "two", "three", "four"].map((text) => job(conversation, text));
    // Two turns, and the first job finished in between.
    await Promise.all(jobs.slice(0, 2).map((added) => store.add(added)));
    await Promise.all([...jobs.slice(2).map((added) => store.add(added)), store.add(job("other"))]);
    const first = jobs[0];
    if (first === undefined) throw new Error("no job");
    await store.remove(jobKey(first));
    const lane = await store.lane(conversationKey("webhook", conversation));
    expect(lane.map((stored) => stored.message.message.text)).toEqual(["two", "three", "four"]);
  });

  it("has a finished job deleted when remove resolves, as another replica sees it", async () => {
    const { url, pool } = await migratedDatabase();
    const store = createPostgresPendingJobStore(pool, createLogSink().logger);
    const finished = job("c1");
    await store.add(finished);
    await store.remove(jobKey(finished));
    const other = createPostgresPendingJobStore(poolOn(url), createLogSink().logger);
    expect(await other.get(jobKey(finished))).toBeUndefined();
  });

  it("keeps the conversation's highest reply sequence with the job's update, which a new counter reads", async () => {
    const { url, pool } = await migratedDatabase();
    const store = createPostgresPendingJobStore(pool, createLogSink().logger);
    const counter = createPostgresSequenceCounter(pool);
    const key = conversationKey("webhook", "numbered");
    const first = job("numbered");
    await store.add(first);
    expect(await counter.reserve(key, 2)).toBe(1);
    await store.update(withReplies(first, [1, 2]));
    // An older job's numbers never lower it.
    const late = job("numbered");
    await store.add(withReplies(late, [1]));

    // Another replica taking the conversation over starts after 2.
    const elsewhere = createPostgresSequenceCounter(poolOn(url));
    expect(await elsewhere.reserve(key, 3)).toBe(3);
    // It numbered 3 to 5 (stored with its job); this replica forgets what it knew and reads again.
    await createPostgresPendingJobStore(poolOn(url), createLogSink().logger).add(
      withReplies(job("numbered"), [3, 4, 5]),
    );
    expect(await counter.reserve(key, 1)).toBe(3);
    counter.forget(key);
    expect(await counter.reserve(key, 1)).toBe(6);
  });

  it("flush waits for writes under way", async () => {
    const { pool } = await migratedDatabase();
    const store = createPostgresPendingJobStore(pool, createLogSink().logger);
    const jobs = Array.from({ length: 20 }, () => job("flushed"));
    const added = Promise.all(jobs.map((queued) => store.add(queued)));
    await store.flush();
    const stored = await pool.query<{ n: number }>("SELECT count(*)::int AS n FROM webhook_channel.jobs");
    expect(stored.rows[0]?.n).toBe(20);
    await added;
  });
});

describe("Postgres conversation store", () => {
  it("keeps the last maxTurns turns of a conversation, appends of a turn in one statement", async () => {
    const { pool } = await migratedDatabase();
    const store = createPostgresConversationStore(pool, 5);
    const query = vi.spyOn(pool, "query");
    await Promise.all(
      Array.from({ length: 8 }, (_, index) => store.append("kept", [{ role: "user", text: `${index}`, at: index }])),
    );
    expect(query).toHaveBeenCalledTimes(1);
    query.mockRestore();
    await store.append("kept", [{ role: "assistant", text: "8", at: 8 }]);
    const stored = await pool.query<{ n: number }>(
      "SELECT count(*)::int AS n FROM webhook_channel.turns WHERE conversation = 'kept'",
    );
    expect(stored.rows[0]?.n).toBe(5);
    expect((await store.history("kept", 10)).map((turn) => turn.text)).toEqual(["4", "5", "6", "7", "8"]);
  });
});
