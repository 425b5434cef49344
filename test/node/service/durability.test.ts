import { mkdtemp } from "node:fs/promises";
import { createServer as createNetServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { runCli } from "../../../src/cli/run-cli.js";
import { validateConfig } from "../../../src/core/config/validate-config.js";
import { type ReceivedReply, type Receiver, startReceiver } from "../../../src/node/receiver/sample-receiver.js";
import { startService } from "../../../src/node/service/start-service.js";
import { configDocument } from "../../support/configs.js";
import { freePort } from "../../support/free-port.js";
import { createLogSink } from "../../support/log-sink.js";
import { type ServiceHarness, startHarness } from "../../support/node-service.js";
import { listeningUrl, type Spawned, spawnNode, writeTempConfig } from "../../support/spawn-node.js";
import { waitFor } from "../../support/wait-for.js";

const SECRET = "durable-secret-123456";
let spawned: Spawned | undefined;
let receiver: Receiver | undefined;
let harness: ServiceHarness | undefined;

afterEach(async () => {
  spawned?.child.kill("SIGKILL");
  await receiver?.close();
  await harness?.close();
  spawned = undefined;
  receiver = undefined;
  harness = undefined;
});

/** Every reply of one message carries one `webhook-id`, however often it was posted. */
function expectOneIdPerMessage(replies: readonly ReceivedReply[]): void {
  const idsPerMessage = new Map<string, Set<string>>();
  for (const reply of replies) {
    const inReplyTo = (reply.body as { in_reply_to: string }).in_reply_to;
    const ids = idsPerMessage.get(inReplyTo) ?? new Set<string>();
    idsPerMessage.set(inReplyTo, ids.add(String(reply.headers["webhook-id"])));
  }
  for (const ids of idsPerMessage.values()) expect(ids.size).toBe(1);
}

describe("state_dir on Node", () => {
  it.each([false, true])(
    "loses nothing accepted across kill -9 while the receiver is down (delivery_thread: %s)",
    async (deliveryThread) => {
      const stateDir = await mkdtemp(join(tmpdir(), "webhook-channel-state-"));
      const port = await freePort();
      const config = await writeTempConfig(
        configDocument(
          {
            bind: "127.0.0.1:0",
            outbound_url: `http://127.0.0.1:${port}/replies`,
            delivery: { initial_delay_ms: 50, max_delay_ms: 200, max_attempts: 1000 },
          },
          { state_dir: stateDir, delivery_thread: deliveryThread },
        ),
      );
      spawned = spawnNode("dist/node.js", ["--config", config], { WEBHOOK_SECRET: SECRET });
      const url = await listeningUrl(spawned);
      const accepted: string[] = [];
      for (let index = 0; index < 30; index += 1) {
        const response = await fetch(url, {
          method: "POST",
          headers: { authorization: `Bearer ${SECRET}`, "content-type": "application/json" },
          body: JSON.stringify({ sender_id: `s${index % 3}`, text: `m${index}` }),
        });
        expect(response.status).toBe(200);
        accepted.push(((await response.json()) as { message_id: string }).message_id);
      }
      spawned.child.kill("SIGKILL");
      await spawned.exited;

      const replies: ReceivedReply[] = [];
      receiver = await startReceiver({ port, onReply: (reply) => replies.push(reply) });
      spawned = spawnNode("dist/node.js", ["--config", config], { WEBHOOK_SECRET: SECRET });
      await listeningUrl(spawned);
      const resumed = spawned.lines
        .map((line) => JSON.parse(line) as { msg: string; count?: number })
        .find((line) => line.msg === "resumed unfinished messages from state_dir");
      expect(resumed?.count).toBe(accepted.length);
      const answered = () => new Set(replies.map((reply) => (reply.body as { in_reply_to: string }).in_reply_to));
      await waitFor(
        () => (accepted.every((id) => answered().has(id)) ? true : undefined),
        15_000,
        "every accepted message answered",
      );

      expectOneIdPerMessage(replies);
      spawned.child.kill("SIGTERM");
      expect(await spawned.exited).toBe(0);
    },
  );

  it("loses nothing answered 200 when killed with -9 under load, with every turn's writes in one commit", async () => {
    const stateDir = await mkdtemp(join(tmpdir(), "webhook-channel-state-"));
    const port = await freePort();
    const replies: ReceivedReply[] = [];
    receiver = await startReceiver({ port, onReply: (reply) => replies.push(reply) });
    const config = await writeTempConfig(
      configDocument(
        {
          bind: "127.0.0.1:0",
          outbound_url: `http://127.0.0.1:${port}/replies`,
          delivery: { initial_delay_ms: 50, max_delay_ms: 200, max_attempts: 1000 },
        },
        { state_dir: stateDir },
      ),
    );
    spawned = spawnNode("dist/node.js", ["--config", config], { WEBHOOK_SECRET: SECRET });
    const url = await listeningUrl(spawned);
    // Twenty clients sending as fast as they are answered, killed mid-stream.
    const answered200: string[] = [];
    let killed = false;
    const client = async (index: number): Promise<void> => {
      for (let n = 0; !killed; n += 1) {
        try {
          const response = await fetch(url, {
            method: "POST",
            headers: { authorization: `Bearer ${SECRET}`, "content-type": "application/json" },
            body: JSON.stringify({ sender_id: `c${index}`, text: `m${n}` }),
          });
          if (response.status === 200) answered200.push(((await response.json()) as { message_id: string }).message_id);
          else await response.body?.cancel();
        } catch {
          return;
        }
      }
    };
    const clients = Array.from({ length: 20 }, (_, index) => client(index));
    await waitFor(() => (answered200.length >= 300 ? true : undefined), 15_000, "300 messages accepted");
    spawned.child.kill("SIGKILL");
    killed = true;
    await spawned.exited;
    await Promise.all(clients);

    const answered = () => new Set(replies.map((reply) => (reply.body as { in_reply_to: string }).in_reply_to));

    spawned = spawnNode("dist/node.js", ["--config", config], { WEBHOOK_SECRET: SECRET });
    await listeningUrl(spawned);
    // The kill caught work under way: the restart found unfinished messages to resume.
    const resumed = spawned.lines
      .map((line) => JSON.parse(line) as { msg: string; count?: number })
      .find((line) => line.msg === "resumed unfinished messages from state_dir");
    expect(resumed?.count ?? 0).toBeGreaterThan(0);
    await waitFor(
      () => (answered200.every((id) => answered().has(id)) ? true : undefined),
      20_000,
      "every message answered 200 delivered",
    );

    // A message may be posted twice (its removal was not committed yet), never with two ids.
    expectOneIdPerMessage(replies);
    spawned.child.kill("SIGTERM");
    expect(await spawned.exited).toBe(0);
  }, 60_000);

  it("keeps dead letters for `dead-letters list` and delivers them after `replay`", async () => {
    const stateDir = await mkdtemp(join(tmpdir(), "webhook-channel-state-"));
    let status = 400;
    harness = await startHarness(
      { delivery: { initial_delay_ms: 10, max_delay_ms: 10 } },
      { status: () => status },
      { state_dir: stateDir },
    );
    const response = await harness.post({ sender_id: "a", text: "rejected first" });
    const { message_id } = (await response.json()) as { message_id: string };
    const logs = harness.logs;
    await waitFor(() => logs.find((line) => String(line.msg).startsWith("dead letter")), 5_000, "a dead letter");

    const config = await writeTempConfig({
      state_dir: stateDir,
      channels: [{ type: "webhook", token_env: "WEBHOOK_SECRET", webhook: { outbound_url: "http://127.0.0.1:9/x" } }],
      routes: [{ channel: "webhook", brain: "echo" }],
    });
    let out = "";
    const io = { env: {}, out: (text: string) => (out += text), err: () => undefined };
    expect(await runCli(["dead-letters", "list", "--json", "--config", config], io)).toBe(0);
    const letter = JSON.parse(out.trim()) as unknown;
    expect(letter).toMatchObject({
      id: message_id,
      message_id,
      stage: "reply",
      error: { status: 400 },
      attempts: 1,
      replies: [{ delivered: false, body: { in_reply_to: message_id } }],
    });
    out = "";
    expect(await runCli(["dead-letters", "list", "--config", config], io)).toBe(0);
    expect(out).toMatch(new RegExp(`^ID .*\\n${message_id} +webhook +a +\\d{4}-\\d\\d-\\d\\dT[\\d:]{8}Z +1 +reply +`));

    status = 200;
    const firstReplyId = String(harness.replies[0]?.headers["webhook-id"]);
    expect(await runCli(["dead-letters", "replay", "--id", message_id, "--config", config], io)).toBe(0);
    const replies = harness.replies;
    const second = await waitFor(() => replies[1], 5_000, "the replayed delivery");
    expect(second.headers["webhook-id"]).toBe(firstReplyId);
    out = "";
    expect(await runCli(["dead-letters", "list", "--config", config], io)).toBe(0);
    expect(out).toBe("");
  });

  it("dead-letters says it needs state_dir", async () => {
    const config = await writeTempConfig({
      channels: [{ type: "webhook", token_env: "WEBHOOK_SECRET", webhook: { outbound_url: "http://127.0.0.1:9/x" } }],
      routes: [{ channel: "webhook", brain: "echo" }],
    });
    let err = "";
    const io = { env: {}, out: () => undefined, err: (text: string) => (err += text) };
    expect(await runCli(["dead-letters", "list", "--config", config], io)).toBe(1);
    expect(err).toContain("state_dir");
    expect(await runCli(["dead-letters", "replay", "--config", config], io)).toBe(2);
  });

  it("stops resumed work when a start fails, and the next start delivers it", async () => {
    const stateDir = await mkdtemp(join(tmpdir(), "webhook-channel-state-"));
    const replies: ReceivedReply[] = [];
    const delivered: string[] = [];
    let answer = false;
    receiver = await startReceiver({
      port: 0,
      onReply: (reply) => {
        replies.push(reply);
        if (answer) delivered.push((reply.body as { text: string }).text);
      },
      status: () => (answer ? 200 : 500),
    });
    const configWith = (bind: string) => {
      const result = validateConfig({
        state_dir: stateDir,
        channels: [
          {
            type: "webhook",
            token_env: "WEBHOOK_SECRET",
            webhook: {
              bind,
              outbound_url: receiver?.url,
              delivery: { initial_delay_ms: 20, max_delay_ms: 50, max_attempts: 1000 },
            },
          },
        ],
        routes: [{ channel: "webhook", brain: "echo" }],
      });
      if (!result.ok) throw new Error(JSON.stringify(result.problems));
      return result.config;
    };
    const secrets = new Map([["webhook", SECRET]]);
    const first = await startService({ config: configWith("127.0.0.1:0"), secrets, logger: createLogSink().logger });
    const url = `http://127.0.0.1:${first.listeners[0]?.port}/webhook`;
    for (const text of ["one", "two"]) {
      const response = await fetch(url, {
        method: "POST",
        headers: { authorization: `Bearer ${SECRET}`, "content-type": "application/json" },
        body: JSON.stringify({ sender_id: text, text }),
      });
      expect(response.status).toBe(200);
    }
    await waitFor(() => (replies.length >= 2 ? true : undefined), 5_000, "first attempts");
    expect((await first.stop(0)).fate).toBe("kept");

    // The next start resumes both messages, then cannot listen: the port is taken.
    const taken = createNetServer();
    await new Promise<void>((resolve) => taken.listen(0, "127.0.0.1", resolve));
    const address = taken.address();
    const port = typeof address === "object" && address !== null ? address.port : 0;
    const failed = createLogSink();
    try {
      const error = await startService({
        config: configWith(`127.0.0.1:${port}`),
        secrets,
        logger: failed.logger,
      }).then(
        () => undefined,
        (thrown: unknown) => thrown,
      );
      expect(String(error)).toContain("already in use");
    } finally {
      taken.close();
    }
    // Nothing runs on: no more attempts, no retries against a closed consumer or database.
    const attemptsAfterFailure = replies.length;
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(replies.length).toBe(attemptsAfterFailure);
    expect(failed.lines.filter((line) => line.level === "error").map((line) => line.msg)).toEqual([]);

    answer = true;
    const next = await startService({ config: configWith("127.0.0.1:0"), secrets, logger: createLogSink().logger });
    try {
      await waitFor(
        () => (delivered.includes("one") && delivered.includes("two") ? true : undefined),
        5_000,
        "both messages delivered",
      );
    } finally {
      await next.stop(1_000);
    }
  });
});
