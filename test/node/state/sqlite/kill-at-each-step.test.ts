/**
 * `kill -9` at each step of a run with `state_dir` (the brain answered and its replies stored,
 * the first of several replies posted and answered 2xx, the message settled): the next start
 * resumes without a second `webhook-id` for any reply and with `sequence` 1, 2, 3… without a gap
 * or a repeat, and asks the brain no more than once per message.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, expect, it } from "vitest";
import { type ReceivedReply, type Receiver, startReceiver } from "../../../../src/node/receiver/sample-receiver.js";
import { configDocument } from "../../../support/configs.js";
import { type JsonTestServer, startJsonServer } from "../../../support/json-test-server.js";
import { replyBody } from "../../../support/reply-checks.js";
import { listeningUrl, type Spawned, spawnNode, writeTempConfig } from "../../../support/spawn-node.js";
import { waitFor } from "../../../support/wait-for.js";

const SECRET = "kill-step-secret-123456";
const cleanups: (() => Promise<unknown> | undefined)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** The POST (counted from 1, over both processes) on whose arrival the first process is killed. */
const steps = [
  { step: "brain answered and stored (killed at the first reply's POST)", killAt: 1 },
  { step: "first of three replies answered 2xx (killed at the second's POST)", killAt: 2 },
  { step: "third reply posted, not yet answered", killAt: 3 },
  { step: "first message settled (killed at the second message's first POST)", killAt: 4 },
];

it.each(steps)(
  "resumes after kill -9: $step",
  async ({ killAt }) => {
    const stateDir = await mkdtemp(join(tmpdir(), "webhook-channel-kill-step-"));
    cleanups.push(() => rm(stateDir, { recursive: true, force: true }));
    // The brain answers once both messages were accepted, so that the kill finds both stored.
    let bothAccepted = (): void => undefined;
    const accepting = new Promise<void>((resolve) => {
      bothAccepted = resolve;
    });
    const brain: JsonTestServer = await startJsonServer(async () => {
      await accepting;
      return { status: 200, body: { replies: [{ text: "one" }, { text: "two" }, { text: "three" }] } };
    });
    cleanups.push(() => brain.close());
    let spawned: Spawned | undefined;
    let posts = 0;
    let killed = false;
    const replies: ReceivedReply[] = [];
    const receiver: Receiver = await startReceiver({
      port: 0,
      onReply: (reply) => replies.push(reply),
      status: () => {
        posts += 1;
        if (posts === killAt && spawned !== undefined) {
          spawned.child.kill("SIGKILL");
          killed = true;
          return "hang";
        }
        return 200;
      },
    });
    cleanups.push(() => receiver.close());
    const config = await writeTempConfig(
      configDocument(
        { bind: "127.0.0.1:0", outbound_url: receiver.url, delivery: { initial_delay_ms: 50, max_delay_ms: 200 } },
        {
          state_dir: stateDir,
          routes: [{ channel: "webhook", brain: "bot" }],
          brains: { bot: { type: "http", url: `${brain.origin}/bot`, max_history: 0 } },
        },
      ),
    );
    const start = async (): Promise<string> => {
      spawned = spawnNode("dist/node.js", ["--config", config], { WEBHOOK_SECRET: SECRET });
      const running = spawned;
      cleanups.push(() => void running.child.kill("SIGKILL"));
      return listeningUrl(running);
    };
    const url = await start();
    const accepted: string[] = [];
    for (const text of ["first", "second"]) {
      const response = await fetch(url, {
        method: "POST",
        headers: { authorization: `Bearer ${SECRET}`, "content-type": "application/json" },
        body: JSON.stringify({ sender_id: "alice", text }),
      });
      expect(response.status).toBe(200);
      accepted.push(((await response.json()) as { message_id: string }).message_id);
    }
    bothAccepted();
    await waitFor(() => (killed ? true : undefined), 10_000, "the kill");
    await spawned?.exited;
    await start();
    // Both messages' three replies, each at least once.
    await waitFor(
      () => (new Set(replies.map((reply) => replyBody(reply).message_id)).size >= 6 ? true : undefined),
      15_000,
      "six distinct replies",
    );
    // Each reply (a message's n-th) under one webhook-id, however often it was posted.
    const idsPerReply = new Map<string, Set<string>>();
    for (const reply of replies) {
      const body = reply.body as { message_id: string; in_reply_to: string; text: string };
      expect(reply.headers["webhook-id"]).toBe(body.message_id);
      const key = `${body.in_reply_to} ${body.text}`;
      idsPerReply.set(key, (idsPerReply.get(key) ?? new Set()).add(body.message_id));
    }
    expect([...idsPerReply.values()].map((ids) => ids.size)).toEqual([1, 1, 1, 1, 1, 1]);
    // First posts in acceptance order, numbered 1 to 6.
    const seen = new Set<string>();
    const firsts: { in_reply_to: string; text: string; sequence: number }[] = [];
    for (const reply of replies) {
      const body = reply.body as { message_id: string; in_reply_to: string; text: string; sequence: number };
      if (seen.has(body.message_id)) continue;
      seen.add(body.message_id);
      firsts.push({ in_reply_to: body.in_reply_to, text: body.text, sequence: body.sequence });
    }
    const [first = "", second = ""] = accepted;
    expect(firsts).toEqual([
      { in_reply_to: first, text: "one", sequence: 1 },
      { in_reply_to: first, text: "two", sequence: 2 },
      { in_reply_to: first, text: "three", sequence: 3 },
      { in_reply_to: second, text: "one", sequence: 4 },
      { in_reply_to: second, text: "two", sequence: 5 },
      { in_reply_to: second, text: "three", sequence: 6 },
    ]);
    // The brain is asked once per message: its replies were stored before the first was posted.
    expect(brain.requests.length).toBe(2);
  },
  60_000,
);
