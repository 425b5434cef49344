/**
 * A replayed dead letter taken (`takeReplayedJobs`: state 'replay' to 'pending') by a replica
 * that is killed before its claim of the conversation commits. The take named nobody, so the job
 * was pending in a conversation nobody ran, which no sweep finds (they look through a lapsed
 * owner or a lapsed `stored_by`): it was never answered. The take names its replica now.
 */
import pg from "pg";
import { afterEach, describe, expect, it } from "vitest";
import { conversationKey } from "../../../src/core/conversation/conversation-store.js";
import type { Job } from "../../../src/core/lifecycle/job.js";
import { restoreJob, takeReplayedJobs } from "../../../src/node/state/postgres/postgres-replays.js";
import type { ServiceHarness } from "../../support/node-service.js";
import { startReplicaHarness } from "../../support/replica-harness.js";
import { waitFor } from "../../support/wait-for.js";
import { migratedDatabase } from "../state/postgres/fresh-postgres.js";

const LEASE_MS = 1_000;
let harness: ServiceHarness | undefined;
let client: pg.Client | undefined;

afterEach(async () => {
  await harness?.close();
  await client?.end();
  harness = undefined;
  client = undefined;
});

/** A dead letter's job of `conversationId`, as a replay stores it again. */
function replayed(conversationId: string): Job {
  return {
    message: {
      id: crypto.randomUUID(),
      channel: "webhook",
      receivedAt: Date.now(),
      message: { senderId: "replayed", conversationId, text: "again" },
    },
    delivered: 0,
    attempts: 0,
  };
}

describe("a replayed dead letter whose taker dies before it claims the conversation", () => {
  it("is run by a live replica", async () => {
    // The pool is closed with the file's other pools (`poolOn`).
    const { url, pool } = await migratedDatabase();
    client = new pg.Client({ connectionString: url });
    await client.connect();
    const db = client;
    // A first replay, taken before any replica runs: the live replica finds it as it starts, and
    // its reply says that start's look for such conversations is done.
    const first = replayed("first");
    await restoreJob(pool, first);
    expect(await takeReplayedJobs(pool, "rfirst", () => 100)).toHaveLength(1);
    harness = await startReplicaHarness(url, LEASE_MS);
    const live = harness;
    const answered = (id: string | undefined) => () =>
      live.replies.some((reply) => (reply.body as { in_reply_to?: string }).in_reply_to === id) ? true : undefined;
    await waitFor(answered(first.message.id), 15 * LEASE_MS, "the first replayed reply");

    // A replay taken by the replica "rtaker" (its poll), which is then killed before its claim:
    // its lease runs out, and it never says it is gone. Should the live replica's own poll take
    // the replay between the two statements, it answers it itself: the test tries a new one.
    let taken: Job[] = [];
    for (let tries = 0; tries < 5 && taken.length === 0; tries += 1) {
      await restoreJob(pool, replayed("replayed"));
      taken = await takeReplayedJobs(pool, "rtaker", () => 100);
    }
    expect(taken).toHaveLength(1);
    await db.query(
      "INSERT INTO webhook_channel.replicas (id, lease_until) VALUES ('rtaker', now() - interval '1 second')",
    );
    const id = taken[0]?.message.id;

    await waitFor(answered(id), 15 * LEASE_MS, "the replayed reply");
    // Its job leaves the table once the delivery commits.
    await waitFor(
      async () => ((await db.query("SELECT 1 FROM webhook_channel.jobs")).rowCount === 0 ? true : undefined),
      5_000,
      "the job's delete",
    );
    const lane = await db.query("SELECT owner FROM webhook_channel.lanes WHERE conversation = $1", [
      conversationKey("webhook", "replayed"),
    ]);
    expect(lane.rowCount).toBe(1);
  }, 60_000);
});
