/**
 * A conversation whose lane row still names a dead replica that was already swept (its lane was
 * idle when it died, so the sweep marked it swept at once) gets a new message, stored by a
 * replica within its first lease (it may not take over yet: just started, or its lease
 * connection just came back after a database blip). Its claim was refused, it told the dead
 * owner, and nothing found the job again: the message was never answered. The claim now says
 * the owner is not live, and the replica claims the lane at a sweep once it may.
 */
import pg from "pg";
import { afterEach, describe, expect, inject, it } from "vitest";
import { conversationKey } from "../../../src/core/conversation/conversation-store.js";
import type { ServiceHarness } from "../../support/node-service.js";
import { createTestDatabase } from "../../support/postgres-cluster.js";
import { startReplicaHarness } from "../../support/replica-harness.js";
import { waitFor } from "../../support/wait-for.js";

const LEASE_MS = 1_000;
const harnesses: ServiceHarness[] = [];
let client: pg.Client | undefined;

afterEach(async () => {
  await Promise.all(harnesses.splice(0).map((h) => h.close()));
  await client?.end();
  client = undefined;
});

describe("a message in a conversation a swept dead replica still names", () => {
  it("is delivered by some replica", async () => {
    const url = await createTestDatabase(inject("postgresUrl"));
    const first = await startReplicaHarness(url, LEASE_MS);
    harnesses.push(first);
    client = new pg.Client({ connectionString: url });
    await client.connect();
    const db = client;
    // A replica killed (-9) while it held an idle conversation: its lease ran out, it never said gone.
    await db.query(
      "INSERT INTO webhook_channel.replicas (id, lease_until) VALUES ('rdead', now() - interval '1 second')",
    );
    await db.query(
      "INSERT INTO webhook_channel.lanes (conversation, channel, owner, epoch) VALUES ($1, 'webhook', 'rdead', 1)",
      [conversationKey("webhook", "stuck")],
    );
    // The live replica sweeps it (nothing to take: the lane is idle) and marks it swept.
    await waitFor(
      async () =>
        (await db.query("SELECT 1 FROM webhook_channel.replicas WHERE id = 'rdead' AND swept")).rowCount === 1
          ? true
          : undefined,
      10_000,
      "rdead swept",
    );
    // A replica that has just started (its first lease: it may not take over a silent replica yet).
    const second = await startReplicaHarness(url, LEASE_MS);
    harnesses.push(second);
    expect((await second.post({ sender_id: "stuck", text: "hello" })).status).toBe(200);

    await waitFor(
      () => (first.replies.length + second.replies.length > 0 ? true : undefined),
      15 * LEASE_MS,
      "the reply",
    );
    // Its job leaves the table once the delivery commits.
    await waitFor(
      async () => ((await db.query("SELECT 1 FROM webhook_channel.jobs")).rowCount === 0 ? true : undefined),
      5_000,
      "the job's delete",
    );
    const lane = await db.query("SELECT owner FROM webhook_channel.lanes WHERE conversation = $1", [
      conversationKey("webhook", "stuck"),
    ]);
    expect(lane.rows[0]?.owner).not.toBe("rdead");
  }, 60_000);
});
