/**
 * A message of a conversation the replica runs already is placed from what its own add read
 * under the lane's lock: no claim statement of its own, one round trip fewer on its path. The
 * first message of a conversation, which no replica runs yet, still claims it.
 */
import pg from "pg";
import { afterEach, describe, expect, inject, it } from "vitest";
import type { ServiceHarness } from "../../support/node-service.js";
import { createTestDatabase } from "../../support/postgres-cluster.js";
import { startReplicaHarness } from "../../support/replica-harness.js";
import { waitFor } from "../../support/wait-for.js";

const LEASE_MS = 10_000;
/** How a claim statement begins (`lane-statements.ts`). */
const CLAIM = /^\s*WITH input AS \(/;

type Query = (this: pg.Client, ...args: unknown[]) => unknown;

/** Counts the claim statements any client of this process sends, until restored. */
function countClaims(): { readonly count: () => number; restore: () => void } {
  const prototype = pg.Client.prototype as unknown as { query: Query };
  const original = prototype.query;
  let claims = 0;
  prototype.query = function (this: pg.Client, ...args: unknown[]) {
    const [first] = args;
    const text = typeof first === "string" ? first : (first as { text?: unknown } | undefined)?.text;
    if (typeof text === "string" && CLAIM.test(text)) claims += 1;
    return original.apply(this, args);
  };
  return {
    count: () => claims,
    restore: () => {
      prototype.query = original;
    },
  };
}

let harness: ServiceHarness | undefined;
let counter: ReturnType<typeof countClaims> | undefined;

afterEach(async () => {
  counter?.restore();
  await harness?.close();
  counter = undefined;
  harness = undefined;
});

describe("placing a message in a conversation the replica runs", () => {
  it("claims the conversation for its first message only", async () => {
    const url = await createTestDatabase(inject("postgresUrl"));
    counter = countClaims();
    harness = await startReplicaHarness(url, LEASE_MS);
    const service = harness;
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
});
