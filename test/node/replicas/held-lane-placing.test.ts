/**
 * A message of a conversation a replica runs already is placed from what its own add read
 * under the lane's lock: no claim statement of its own, one round trip fewer on its path; when
 * another replica runs it, the add itself tells that one, with no claim and no notice
 * statement. The first message of a conversation, which no replica runs yet, still claims it.
 */
import pg from "pg";
import { afterEach, describe, expect, inject, it } from "vitest";
import type { ServiceHarness } from "../../support/node-service.js";
import { createTestDatabase } from "../../support/postgres-cluster.js";
import { startReplicaHarness } from "../../support/replica-harness.js";
import { waitFor } from "../../support/wait-for.js";
import { poolOn } from "../state/postgres/fresh-postgres.js";
import { holdAnAdd, jobIn, untilOneWaitsForALock } from "../state/postgres/lane-tickets.js";

const LEASE_MS = 10_000;
/** How a claim statement begins (`lane-statements.ts`). */
const CLAIM = /^\s*WITH input AS \(/;

type Query = (this: pg.Client, ...args: unknown[]) => unknown;

/** How a separate notice statement begins (`lane-statements.ts`). */
const NOTICE = /^\s*SELECT pg_notify\(c, p\)/;

/** Counts the statements any client of this process sends that `pattern` matches, until restored. */
function countStatements(pattern: RegExp): { readonly count: () => number; restore: () => void } {
  const prototype = pg.Client.prototype as unknown as { query: Query };
  const original = prototype.query;
  let matched = 0;
  prototype.query = function (this: pg.Client, ...args: unknown[]) {
    const [first] = args;
    const text = typeof first === "string" ? first : (first as { text?: unknown } | undefined)?.text;
    if (typeof text === "string" && pattern.test(text)) matched += 1;
    return original.apply(this, args);
  };
  return {
    count: () => matched,
    restore: () => {
      prototype.query = original;
    },
  };
}

let harnesses: ServiceHarness[] = [];
let counters: ReturnType<typeof countStatements>[] = [];

afterEach(async () => {
  for (const counter of counters) counter.restore();
  for (const harness of harnesses) await harness.close();
  counters = [];
  harnesses = [];
});

describe("placing a message in a conversation a replica runs", () => {
  it("claims the conversation for its first message only", async () => {
    const url = await createTestDatabase(inject("postgresUrl"));
    const counter = countStatements(CLAIM);
    counters.push(counter);
    const service = await startReplicaHarness(url, LEASE_MS);
    harnesses.push(service);
    const replied = (count: number) =>
      waitFor(() => (service.replies.length >= count ? true : undefined), 5_000, `reply ${count}`);

    expect((await service.post({ sender_id: "held", text: "one" })).status).toBe(200);
    await replied(1);
    const afterFirst = counter.count();
    expect(afterFirst).toBeGreaterThanOrEqual(1);

    for (let index = 2; index <= 5; index += 1) {
      expect((await service.post({ sender_id: "held", text: `message ${index}` })).status).toBe(200);
      await replied(index);
    }
    expect(counter.count()).toBe(afterFirst);
    expect(service.replies.map((reply) => (reply.body as { sequence?: unknown }).sequence)).toEqual([1, 2, 3, 4, 5]);

    // Another conversation is claimed as before.
    expect((await service.post({ sender_id: "other", text: "one" })).status).toBe(200);
    await replied(6);
    expect(counter.count()).toBe(afterFirst + 1);
  }, 30_000);

  it("has the add tell the replica that runs the conversation, with no claim nor notice of its own", async () => {
    const url = await createTestDatabase(inject("postgresUrl"));
    const claims = countStatements(CLAIM);
    const notices = countStatements(NOTICE);
    counters.push(claims, notices);
    const owner = await startReplicaHarness(url, LEASE_MS);
    harnesses.push(owner);
    const other = await startReplicaHarness(url, LEASE_MS);
    harnesses.push(other);
    const replied = (count: number) =>
      waitFor(() => (owner.replies.length >= count ? true : undefined), 5_000, `reply ${count}`);

    expect((await owner.post({ sender_id: "shared", text: "one" })).status).toBe(200);
    await replied(1);
    const afterFirst = claims.count();

    // Sent to the other replica in a burst: each add tells the owner, which runs them in order.
    const sent = await Promise.all(
      [2, 3, 4, 5].map((index) => other.post({ sender_id: "shared", text: `message ${index}` })),
    );
    for (const response of sent) expect(response.status).toBe(200);
    await replied(5);
    expect(claims.count()).toBe(afterFirst);
    expect(notices.count()).toBe(0);
    expect(other.replies).toEqual([]);
    expect(owner.replies.map((reply) => (reply.body as { sequence?: unknown }).sequence)).toEqual([1, 2, 3, 4, 5]);
  }, 30_000);

  it("reads on when another statement stored a job of the conversation while its add waited for the lock", async () => {
    const url = await createTestDatabase(inject("postgresUrl"));
    const service = await startReplicaHarness(url, LEASE_MS);
    harnesses.push(service);
    const replied = (count: number) =>
      waitFor(() => (service.replies.length >= count ? true : undefined), 5_000, `reply ${count}`);
    expect((await service.post({ sender_id: "raced", text: "one" })).status).toBe(200);
    await replied(1);

    // What another replica's add does, held open: a job of the conversation, and its row written
    // under its lock. It tells nobody, so only the owner's own add can find it.
    const pool = poolOn(url);
    const stored = jobIn("raced", "stored elsewhere");
    const other = await holdAnAdd(pool, stored, "rother");
    try {
      const posted = service.post({ sender_id: "raced", text: "three" });
      await untilOneWaitsForALock(pool, "the owner's add to wait for the lane's lock");
      await other.commit();
      expect((await posted).status).toBe(200);
    } finally {
      other.release();
    }
    await replied(3);
    const texts = service.replies.map((reply) => (reply.body as { text?: unknown }).text);
    expect(texts).toEqual(["one", "stored elsewhere", "three"].map((text) => expect.stringContaining(text)));
  }, 30_000);
});
