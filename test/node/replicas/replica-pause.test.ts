/**
 * A replica paused past its lease in the middle of slow brain calls, as a long GC pause, a frozen
 * VM or a stalled disk would pause it: three replicas of the built service on one Postgres, a bot
 * that takes over a second per message, load on twelve conversations, and the replica that runs
 * them all stopped with SIGSTOP past its lease (five seconds) and then resumed once the others
 * took its conversations over; when it wakes, its runs' writes are refused by the lanes' fence, so
 * no reply reaches the receiver under a second webhook-id, every conversation's numbers run 1..n
 * in acceptance order, and the paused replica serves again.
 */
import { afterEach, describe, expect, inject, it } from "vitest";
import { type ReceivedReply, type Receiver, startReceiver } from "../../../src/node/receiver/sample-receiver.js";
import { replicaConfigDocument } from "../../support/configs.js";
import { type JsonTestServer, startJsonServer } from "../../support/json-test-server.js";
import { createTestDatabase } from "../../support/postgres-cluster.js";
import { waitForTakeover } from "../../support/replica-takeover.js";
import {
  expectConversationInOrder,
  expectOneWebhookIdPerMessage,
  replyBody,
  waitForReplies,
} from "../../support/reply-checks.js";
import { listeningUrl, type Spawned, spawnNode, writeTempConfig } from "../../support/spawn-node.js";
import { waitFor } from "../../support/wait-for.js";

const SECRET = "pause-secret-0123456789abcdef";
const CONVERSATIONS = 12;
const BRAIN_MS = 1_200;
/** The pause lasts until another replica took its conversations over (past the 5 s lease), at most this. */
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

async function post(url: string, conversation: string, text: string): Promise<string | undefined> {
  const response = await fetch(url, {
    method: "POST",
    headers: { authorization: `Bearer ${SECRET}`, "content-type": "application/json" },
    body: JSON.stringify({ sender_id: conversation, text }),
  }).catch(() => undefined);
  if (response?.status !== 200) {
    await response?.body?.cancel();
    return undefined;
  }
  return ((await response.json()) as { message_id: string }).message_id;
}

describe("a replica paused past its lease", () => {
  it("posts nothing under a second webhook-id when it wakes, keeps every conversation's numbers and order, and serves again", async () => {
    const databaseUrl = await createTestDatabase(inject("postgresUrl"));
    let inFlight = 0;
    bot = await startJsonServer(async (request) => {
      inFlight += 1;
      await new Promise((resolve) => setTimeout(resolve, BRAIN_MS));
      inFlight -= 1;
      const text = (request.body as { message?: { text?: string } } | undefined)?.message?.text ?? "";
      return { status: 200, body: { text: `re: ${text}` } };
    });
    const replies: ReceivedReply[] = [];
    receiver = await startReceiver({ port: 0, onReply: (reply) => replies.push(reply) });
    const config = await writeTempConfig(
      replicaConfigDocument(receiver.url, {
        routes: [{ channel: "webhook", brain: "bot" }],
        brains: { bot: { type: "http", url: `${bot.origin}/bot`, timeout_ms: 30_000 } },
      }),
    );
    const env = { WEBHOOK_SECRET: SECRET, DATABASE_URL: databaseUrl };
    replicas = [0, 1, 2].map(() => spawnNode("dist/node.js", ["--config", config], env));
    const urls = await Promise.all(replicas.map((replica) => listeningUrl(replica)));
    const paused = replicas[0];
    if (paused === undefined) throw new Error("no replica");

    // The first replica stores (and so runs) every conversation; the clients go on with the
    // others while it sleeps, and with all three once it is back.
    const accepted = new Map<string, string[]>();
    let targets = [0];
    let stop = false;
    const client = async (index: number): Promise<void> => {
      const conversation = `conversation-${index}`;
      const ids: string[] = [];
      accepted.set(conversation, ids);
      for (let turn = 0; !stop; turn += 1) {
        const target = targets[turn % targets.length] ?? 0;
        const id = await post(urls[target] ?? "", conversation, `m${turn}`);
        if (id !== undefined) ids.push(id);
        // A little slower than the bot answers a conversation, so that the backlog stays bounded.
        await new Promise((resolve) => setTimeout(resolve, 1_500));
      }
    };
    const clients = Array.from({ length: CONVERSATIONS }, (_, index) => client(index));
    // In the middle of brain calls: the bot holds some of the first replica's calls.
    await waitFor(() => (inFlight >= 3 ? true : undefined), 15_000, "brain calls in flight");
    targets = [1, 2];
    paused.child.kill("SIGSTOP");
    // Asleep until its lease ran out and another replica took its conversations over.
    await waitForTakeover(replicas.slice(1), PAUSE_CAP_MS);
    paused.child.kill("SIGCONT");
    targets = [0, 1, 2];
    // It serves again: a message it accepts gets its reply.
    const afterwards = await waitFor(
      async () => await post(urls[0] ?? "", "after-the-pause", "hello again"),
      15_000,
      "the paused replica to accept again",
    );
    await waitFor(
      () => (replies.some((reply) => replyBody(reply).in_reply_to === afterwards) ? true : undefined),
      20_000,
      "the reply to the message it accepted after the pause",
    );
    stop = true;
    await Promise.all(clients);

    await waitForReplies(replies, [...accepted.values()].flat(), 40_000);
    // One webhook-id per message, whoever posted it and however often.
    expectOneWebhookIdPerMessage(replies);
    for (const [conversation, ids] of accepted) expectConversationInOrder(replies, conversation, ids);
    // The paused replica noticed: its lease had run out, and the runs it woke up in were refused.
    const lines = paused.lines.map((line) => JSON.parse(line) as { msg: string });
    expect(lines.some((line) => line.msg.startsWith("replica lease had run out"))).toBe(true);
    expect(lines.some((line) => line.msg.startsWith("a conversation was claimed by another runner"))).toBe(true);
  }, 150_000);
});
