/**
 * A brain's `max_concurrency` held across replicas when one of them is paused past its lease with
 * calls waiting for its share: two replicas of the built service on one Postgres, a bot that
 * counts the calls it holds at once. While the first one sleeps (SIGSTOP), the second takes its
 * conversations and the whole limit over; when the first wakes, the calls that waited for its old
 * share must not go out beside the second one's, which would call the bot past its limit.
 */
import { afterEach, describe, expect, inject, it } from "vitest";
import { type ReceivedReply, type Receiver, startReceiver } from "../../../src/node/receiver/sample-receiver.js";
import { replicaConfigDocument } from "../../support/configs.js";
import { type JsonTestServer, startJsonServer } from "../../support/json-test-server.js";
import { postAccepted } from "../../support/post-accepted.js";
import { createTestDatabase } from "../../support/postgres-cluster.js";
import { waitForTakeover } from "../../support/replica-takeover.js";
import { expectOneWebhookIdPerMessage, waitForReplies } from "../../support/reply-checks.js";
import { listeningUrl, type Spawned, spawnNode, writeTempConfig } from "../../support/spawn-node.js";
import { waitFor } from "../../support/wait-for.js";

const SECRET = "pause-limit-secret-0123456789abcdef";
const LIMIT = 2;
const BRAIN_MS = 700;
/** The pause lasts past the lease (five seconds) until the other replica's takeover, at most this. */
const PAUSE_CAP_MS = 30_000;

let replicas: Spawned[] = [];
let receiver: Receiver | undefined;
let bot: JsonTestServer | undefined;

afterEach(async () => {
  for (const replica of replicas) {
    replica.child.kill("SIGCONT");
    replica.child.kill("SIGKILL");
  }
  await Promise.all(replicas.map((replica) => replica.exited));
  await receiver?.close();
  await bot?.close();
  replicas = [];
  receiver = undefined;
  bot = undefined;
});

const post = (url: string, conversation: string, text: string): Promise<string> =>
  postAccepted(url, SECRET, conversation, text);

describe("a replica paused past its lease with brain calls waiting", () => {
  it("does not call the brain beside the replica that took its share over", async () => {
    const databaseUrl = await createTestDatabase(inject("postgresUrl"));
    let inFlight = 0;
    let most = 0;
    bot = await startJsonServer(async () => {
      inFlight += 1;
      most = Math.max(most, inFlight);
      await new Promise((resolve) => setTimeout(resolve, BRAIN_MS));
      inFlight -= 1;
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
    replicas = [0, 1].map(() => spawnNode("dist/node.js", ["--config", config], env));
    const [first, second] = replicas;
    if (first === undefined || second === undefined) throw new Error("no replicas");
    const [firstUrl, secondUrl] = await Promise.all(replicas.map((replica) => listeningUrl(replica)));
    // Both replicas count each other (and so hold a share each) once their sweeps have seen both.
    await waitFor(
      () =>
        replicas.every((replica) => replica.lines.some((line) => line.includes("replicas share the brains' limits")))
          ? true
          : undefined,
      15_000,
      "both replicas sharing the limits",
    );

    // The first replica stores (and so runs) every conversation: more calls than its share wait.
    const accepted: string[] = [];
    for (let conversation = 0; conversation < 8; conversation += 1) {
      accepted.push(await post(firstUrl ?? "", `c${conversation}`, "before"));
    }
    await waitFor(() => (inFlight >= 1 ? true : undefined), 10_000, "a brain call of the first replica");
    first.child.kill("SIGSTOP");
    // Asleep until the second one took its conversations over (in the sweep that first counts it
    // gone, and so gives the second the whole limit), however long a loaded machine takes.
    await waitForTakeover([second], PAUSE_CAP_MS);
    // The second one holds the conversations now, and its calls fill the whole limit.
    for (let conversation = 0; conversation < 8; conversation += 1) {
      accepted.push(await post(secondUrl ?? "", `c${conversation}`, "while it sleeps"));
    }
    await waitFor(() => (inFlight >= LIMIT ? true : undefined), 10_000, "the second replica at the limit");
    first.child.kill("SIGCONT");

    await waitForReplies(replies, accepted, 60_000);
    expectOneWebhookIdPerMessage(replies);
    expect(most).toBeLessThanOrEqual(LIMIT);
  }, 150_000);
});
