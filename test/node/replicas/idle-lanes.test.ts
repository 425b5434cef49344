/**
 * A replica on Postgres keeps a conversation it runs between messages that come within a lease,
 * and gives it up once the conversation has been quiet for a lease.
 */
import pg from "pg";
import { afterEach, describe, expect, inject, it } from "vitest";
import type { ServiceHarness } from "../../support/node-service.js";
import { createTestDatabase } from "../../support/postgres-cluster.js";
import { onlyLane, startReplicaHarness } from "../../support/replica-harness.js";
import { waitFor } from "../../support/wait-for.js";

const LEASE_MS = 5_000;

let harness: ServiceHarness | undefined;
let client: pg.Client | undefined;

afterEach(async () => {
  await harness?.close();
  await client?.end();
  harness = undefined;
  client = undefined;
});

describe("idle conversations of a replica", () => {
  it("keeps a conversation between messages within a lease, and gives it up after a lease of quiet", async () => {
    const url = await createTestDatabase(inject("postgresUrl"));
    // When the receiver got the last reply: the conversation is idle from a little later (once
    // the POST's answer is back), so a lease from here is at most the quiet the replica waited.
    let lastReplyAt = 0;
    harness = await startReplicaHarness(url, LEASE_MS, {
      onReply: () => {
        lastReplyAt = performance.now();
      },
    });
    const service = harness;
    client = new pg.Client({ connectionString: url });
    await client.connect();
    const database = client;
    const lane = () => onlyLane(database);
    const replied = (count: number) =>
      waitFor(() => (service.replies.length >= count ? true : undefined), 5_000, `reply ${count}`);

    expect((await service.post({ sender_id: "quiet", text: "one" })).status).toBe(200);
    await replied(1);
    const claimed = await lane();
    expect(claimed?.owner).not.toBeNull();

    // Past a sweep (every fifth of the lease) but within the lease: a new message finds the
    // conversation still this replica's, under the same claim.
    await new Promise((resolve) => setTimeout(resolve, LEASE_MS / 2));
    expect(await lane()).toEqual(claimed);
    expect((await service.post({ sender_id: "quiet", text: "two" })).status).toBe(200);
    await replied(2);
    expect(await lane()).toEqual(claimed);

    const givenUp = await waitFor(
      async () => ((await lane())?.owner === null ? performance.now() : undefined),
      3 * LEASE_MS,
      "the conversation given up",
    );
    expect(givenUp - lastReplyAt).toBeGreaterThanOrEqual(LEASE_MS - 500);
  }, 30_000);
});
