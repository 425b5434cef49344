/**
 * A rolling restart on Postgres: a replica drains its backlog (SIGTERM) while a new one joins. The
 * draining replica keeps the brains' part of its sweep (the live replicas, its calls published,
 * the pauses), so it takes the smaller share the newcomer leaves it, and the replicas together
 * never call a brain past its `max_concurrency`.
 */
import { afterEach, describe, expect, inject, it } from "vitest";
import { type ReceivedReply, type Receiver, startReceiver } from "../../../src/node/receiver/sample-receiver.js";
import { replicaConfigDocument } from "../../support/configs.js";
import { type JsonTestServer, startJsonServer } from "../../support/json-test-server.js";
import { postAccepted } from "../../support/post-accepted.js";
import { createTestDatabase } from "../../support/postgres-cluster.js";
import { waitForReplies } from "../../support/reply-checks.js";
import { listeningUrl, type Spawned, spawnNode, writeTempConfig } from "../../support/spawn-node.js";
import { waitFor } from "../../support/wait-for.js";

const SECRET = "drain-join-secret-0123456789abcdef";
const LIMIT = 3;
const BRAIN_MS = 2_500;

let replicas: Spawned[] = [];
let receiver: Receiver | undefined;
let bot: JsonTestServer | undefined;

afterEach(async () => {
  for (const replica of replicas) replica.child.kill("SIGKILL");
  await Promise.all(replicas.map((replica) => replica.exited));
  await receiver?.close();
  await bot?.close();
  replicas = [];
  receiver = undefined;
  bot = undefined;
});

const post = (url: string, conversation: string, text: string): Promise<string> =>
  postAccepted(url, SECRET, conversation, text);

function shareLine(replica: Spawned, count: number): { rank: number } | undefined {
  return replica.lines
    .map((text) => JSON.parse(text) as { msg: string; replicas?: number; rank?: number })
    .find((line) => line.msg === "replicas share the brains' limits" && line.replicas === count) as
    | { rank: number }
    | undefined;
}

describe("a replica draining while another joins", () => {
  it("does not go on calling the brain with its old share beside the joined replica's", async () => {
    const databaseUrl = await createTestDatabase(inject("postgresUrl"));
    let inFlight = 0;
    let most = 0;
    const holding: string[] = [];
    let atPeak: string[] = [];
    bot = await startJsonServer(async (request) => {
      const id = String((request.body as { conversation_id?: unknown }).conversation_id);
      inFlight += 1;
      holding.push(id);
      if (inFlight > most) atPeak = [...holding].sort();
      most = Math.max(most, inFlight);
      await new Promise((resolve) => setTimeout(resolve, BRAIN_MS));
      inFlight -= 1;
      holding.splice(holding.indexOf(id), 1);
      return { status: 200, body: { text: "ok" } };
    });
    const replies: ReceivedReply[] = [];
    receiver = await startReceiver({ port: 0, onReply: (reply) => replies.push(reply) });
    const config = await writeTempConfig(
      replicaConfigDocument(receiver.url, {
        routes: [{ channel: "webhook", brain: "bot" }],
        brains: { bot: { type: "http", url: `${bot.origin}/bot`, timeout_ms: 30_000, max_concurrency: LIMIT } },
      }),
    );
    const env = { WEBHOOK_SECRET: SECRET, DATABASE_URL: databaseUrl };
    const spawnReplica = () => {
      const spawned = spawnNode("dist/node.js", ["--config", config], env);
      replicas.push(spawned);
      return spawned;
    };
    const a = spawnReplica();
    const b = spawnReplica();
    const [aUrl, bUrl] = await Promise.all([listeningUrl(a), listeningUrl(b)]);
    await waitFor(
      () => (shareLine(a, 2) !== undefined && shareLine(b, 2) !== undefined ? true : undefined),
      15_000,
      "both replicas sharing the limits",
    );
    // The one of rank 0 holds 2 of the 3 slots; it is the one that drains.
    const aFirst = shareLine(a, 2)?.rank === 0;
    const [drainer, drainerUrl, stayerUrl] = aFirst ? [a, aUrl, bUrl] : [b, bUrl, aUrl];

    const accepted: string[] = [];
    accepted.push(
      ...(await Promise.all(Array.from({ length: 8 }, (_, index) => post(drainerUrl, `d${index}`, "backlog")))),
    );
    await waitFor(() => (inFlight >= 2 ? true : undefined), 10_000, "the drainer's two calls");
    drainer.child.kill("SIGTERM");

    // A rolling restart: a new replica joins while the old one drains its backlog.
    const c = spawnReplica();
    const cUrl = await listeningUrl(c);
    await waitFor(() => (shareLine(c, 3) !== undefined ? true : undefined), 15_000, "the new replica's share");
    const mostBefore = most;
    for (let index = 0; index < 4; index += 1) {
      accepted.push(await post(stayerUrl, `s${index}`, "after join"));
      accepted.push(await post(cUrl, `n${index}`, "after join"));
    }
    await waitForReplies(replies, accepted, 90_000);
    expect(mostBefore).toBeLessThanOrEqual(LIMIT);
    // d*: the draining replica's conversations, s*: the staying one's, n*: the new one's.
    expect(most, `in flight at the peak: ${atPeak.join(" ")}`).toBeLessThanOrEqual(LIMIT);
  }, 150_000);
});
