/**
 * A message refused because its write gave up while the database held commits, in a
 * conversation the replica runs and keeps through the hold (its lease outlasts it): the server
 * commits the write all the same once commits go again, and the replica runs the message from
 * its lane as it holds it, numbered next, without claiming the conversation anew.
 */
import pg from "pg";
import { afterEach, describe, expect, it } from "vitest";
import { holdCommits, releaseCommits } from "../../support/commit-hold.js";
import type { ServiceHarness } from "../../support/node-service.js";
import { createTestDatabase, type PostgresCluster, startPostgresCluster } from "../../support/postgres-cluster.js";
import { onlyLane, startReplicaHarness } from "../../support/replica-harness.js";
import { replyBody } from "../../support/reply-checks.js";
import { waitFor } from "../../support/wait-for.js";

/**
 * Longer than the hold below and a write's time limit together, so that the replica keeps its
 * claim; and than a refused write's settling by a sweep (a fifth of the lease apart), so that the
 * idle conversation is not given up first (a give-up that finds a job stored reads it too).
 */
const LEASE_MS = 40_000;
/** A refused write's settling: its wait, two sweeps, and room for a slow machine; well short of the lease. */
const SETTLED_WITHIN_MS = 25_000;

let cluster: PostgresCluster | undefined;
let admin: pg.Client | undefined;
let database: pg.Client | undefined;
let harness: ServiceHarness | undefined;

afterEach(async () => {
  if (admin !== undefined) await releaseCommits(admin).catch(() => undefined);
  await harness?.close();
  await database?.end();
  await admin?.end();
  await cluster?.stop();
  harness = undefined;
  database = undefined;
  admin = undefined;
  cluster = undefined;
});

describe("a refused write that committed, in a conversation the replica keeps", () => {
  it("is run from the lane the replica holds, next in its conversation, under the same claim", async () => {
    cluster = await startPostgresCluster();
    admin = new pg.Client({ connectionString: cluster.url });
    await admin.connect();
    const url = await createTestDatabase(cluster.url);
    harness = await startReplicaHarness(url, LEASE_MS);
    const service = harness;
    database = new pg.Client({ connectionString: url });
    await database.connect();
    const reader = database;
    const lane = () => onlyLane(reader);
    const jobs = async (): Promise<number> => (await reader.query("SELECT 1 FROM webhook_channel.jobs")).rowCount ?? 0;

    expect((await service.post({ sender_id: "kept", text: "first" })).status).toBe(200);
    const first = await waitFor(() => service.replies[0], 5_000, "the first reply");
    const claimed = await lane();
    expect(claimed?.owner).not.toBeNull();

    await holdCommits(admin, cluster.url);
    const sentAt = performance.now();
    const refused = await service.post({ sender_id: "kept", text: "second" });
    expect(refused.status).toBe(503);
    // Refused by the write that gave up, not at once by the probe (which would have stored nothing).
    expect(performance.now() - sentAt, "the refusal came from a write that waited").toBeGreaterThan(3_000);
    // The write the client gave up on waits for the standby with the rest, and commits with them.
    await releaseCommits(admin);
    await waitFor(async () => ((await jobs()) === 1 ? true : undefined), 10_000, "the refused write committed");

    const second = await waitFor(
      () => service.replies[1],
      SETTLED_WITHIN_MS,
      "a reply to the refused message that was stored after all",
    );
    expect(replyBody(second)).toMatchObject({ conversation_id: "kept", sequence: 2 });
    expect(replyBody(second).in_reply_to).not.toBe(replyBody(first).in_reply_to);
    await waitFor(async () => ((await jobs()) === 0 ? true : undefined), 10_000, "no job left stored");
    // Settled in the lane held all along: not claimed anew (which would raise the epoch), and the
    // lease never ran out.
    expect(await lane()).toEqual(claimed);
    expect(service.logs.some((line) => line.msg === "replica taking stock after its lease ran out")).toBe(false);
  }, 90_000);
});
