import { afterEach, describe, expect, it } from "vitest";
import type { Config } from "../../../src/core/config/config-schema.js";
import { validateConfig } from "../../../src/core/config/validate-config.js";
import { type ReceivedReply, type Receiver, startReceiver } from "../../../src/node/receiver/sample-receiver.js";
import { type RunningService, startService } from "../../../src/node/service/start-service.js";
import { configDocument } from "../../support/configs.js";
import { deliveryWorkerEntry } from "../../support/delivery-worker-entry.js";
import { nodeKeyPair, signedAttemptOf, verifiesV1a } from "../../support/ed25519-pair.js";
import { createLogSink } from "../../support/log-sink.js";
import { openRawClient, type RawClient } from "../../support/raw-client.js";
import { waitFor } from "../../support/wait-for.js";

const OLD = "old-secret-0123456789";
const NEW = "new-secret-9876543210";
const FAST_RETRY = { initial_delay_ms: 50, max_delay_ms: 100, max_attempts: 50 };

interface Started {
  readonly service: RunningService;
  readonly url: string;
  readonly logs: Record<string, unknown>[];
  readonly config: Config;
}

let service: RunningService | undefined;
const receivers: Receiver[] = [];
const clients: RawClient[] = [];

afterEach(async () => {
  for (const client of clients.splice(0)) client.socket.destroy();
  await service?.stop(1_000);
  service = undefined;
  await Promise.all(receivers.splice(0).map((receiver) => receiver.close()));
});

function configOf(webhook: Record<string, unknown>, extra: Record<string, unknown> = {}): Config {
  const result = validateConfig(configDocument({ bind: "127.0.0.1:0", delivery: FAST_RETRY, ...webhook }, extra));
  if (!result.ok) throw new Error(JSON.stringify(result.problems));
  return result.config;
}

async function receiver(
  status: (reply: ReceivedReply) => number = () => 200,
): Promise<{ url: string; replies: ReceivedReply[] }> {
  const replies: ReceivedReply[] = [];
  const started = await startReceiver({ port: 0, status, onReply: (reply) => replies.push(reply) });
  receivers.push(started);
  return { url: started.url, replies };
}

async function start(config: Config, env: Record<string, string> = {}): Promise<Started> {
  const { logger, lines } = createLogSink();
  service = await startService({
    config,
    secrets: new Map([["webhook", OLD]]),
    logger,
    env: (name) => env[name],
    ...(config.delivery_thread ? { deliveryThread: { entry: deliveryWorkerEntry(), env } } : {}),
  });
  const port = service.listeners[0]?.port;
  return { service, url: `http://127.0.0.1:${port}/webhook`, logs: lines, config };
}

function post(url: string, secret = OLD, text = "hello"): Promise<Response> {
  return fetch(url, {
    method: "POST",
    headers: { authorization: `Bearer ${secret}`, "content-type": "application/json" },
    body: JSON.stringify({ sender_id: "alice", text }),
  });
}

describe("reloading a running service", () => {
  it.each([
    ["on the main thread", false],
    ["with delivery_thread", true],
  ])(
    "delivers a message accepted before the reload to the new outbound_url at its next attempt (%s)",
    async (_, thread) => {
      const failing = await receiver(() => 503);
      const working = await receiver();
      const {
        service: running,
        url,
        logs,
      } = await start(configOf({ outbound_url: failing.url }, { delivery_thread: thread }));
      const accepted = (await (await post(url)).json()) as { message_id: string };
      await waitFor(() => failing.replies[0], 5_000, "a first failed attempt");

      const result = await running.reload({
        config: configOf({ outbound_url: working.url }, { delivery_thread: thread }),
        secrets: new Map([["webhook", OLD]]),
        env: () => undefined,
      });
      expect(result).toEqual({ ok: true, changed: ["channels[0].webhook.outbound_url"], secrets: [] });
      const reply = await waitFor(() => working.replies[0], 5_000, "the reply at the new receiver");
      expect(reply.body).toMatchObject({ in_reply_to: accepted.message_id, text: "hello" });
      expect(logs).toContainEqual(
        expect.objectContaining({
          level: "info",
          msg: "configuration reloaded",
          changed: ["channels[0].webhook.outbound_url"],
        }),
      );
    },
  );

  it.each([
    ["a bind", { bind: "127.0.0.1:1" }, {}, "channels[0].webhook.bind"],
    ["a path", { path: "/elsewhere" }, {}, "channels[0].webhook.path"],
    ["state_dir", {}, { state_dir: "/tmp/webhook-channel-reload-state" }, "state_dir"],
    ["delivery_thread", {}, { delivery_thread: true }, "delivery_thread"],
    ["buffer_capacity", { buffer_capacity: 5 }, {}, "channels[0].webhook.buffer_capacity"],
    [
      "conversation_memory.retention_hours",
      {},
      { conversation_memory: { retention_hours: 24 } },
      "conversation_memory.retention_hours",
    ],
  ])("refuses a reload that changes %s, naming the key, and carries on as it was", async (_, webhook, extra, key) => {
    const target = await receiver();
    const { service: running, url, logs } = await start(configOf({ outbound_url: target.url }));
    const result = await running.reload({
      config: configOf({ outbound_url: "http://127.0.0.1:9/elsewhere", ...webhook }, extra),
      secrets: new Map([["webhook", NEW]]),
      env: () => undefined,
    });
    expect(result).toEqual({ ok: false, reason: "restart_needed", keys: [key] });
    expect(logs).toContainEqual(expect.objectContaining({ level: "error", keys: [key] }));
    expect((await post(url, OLD)).status).toBe(200);
    expect((await post(url, NEW)).status).toBe(401);
    await waitFor(() => target.replies[0], 5_000, "the reply at the old receiver");
  });

  it("refuses a reload that adds a channel", async () => {
    const { service: running } = await start(configOf({}));
    const two = validateConfig({
      ...configDocument({ bind: "127.0.0.1:0" }),
      channels: [
        {
          type: "webhook",
          token_env: "WEBHOOK_SECRET",
          webhook: { bind: "127.0.0.1:0", outbound_url: "http://127.0.0.1:9/r", delivery: FAST_RETRY },
        },
        {
          type: "webhook",
          name: "second",
          token_env: "SECOND_SECRET",
          webhook: { bind: "127.0.0.1:0", path: "/two", outbound_url: "http://127.0.0.1:9/r" },
        },
      ],
      routes: [
        { channel: "webhook", brain: "echo" },
        { channel: "second", brain: "echo" },
      ],
    });
    if (!two.ok) throw new Error(JSON.stringify(two.problems));
    const result = await running.reload({
      config: two.config,
      secrets: new Map([
        ["webhook", OLD],
        ["second", NEW],
      ]),
      env: () => undefined,
    });
    expect(result).toMatchObject({
      ok: false,
      reason: "restart_needed",
      keys: ['channels[1] (channel "second" added)'],
    });
  });

  it("checks a rotated inbound secret from the next request, accepting two during the rotation", async () => {
    const { service: running, url, logs } = await start(configOf({}));
    const rotating = await running.reload({
      config: configOf({}),
      secrets: new Map([["webhook", `${NEW} ${OLD}`]]),
      env: () => undefined,
    });
    expect(rotating).toEqual({ ok: true, changed: [], secrets: ["WEBHOOK_SECRET"] });
    expect((await post(url, OLD)).status).toBe(200);
    expect((await post(url, NEW)).status).toBe(200);

    await running.reload({ config: configOf({}), secrets: new Map([["webhook", NEW]]), env: () => undefined });
    expect((await post(url, OLD)).status).toBe(401);
    expect((await post(url, NEW)).status).toBe(200);
    const text = JSON.stringify(logs);
    expect(text).not.toContain(OLD);
    expect(text).not.toContain(NEW);
    expect(logs).toContainEqual(
      expect.objectContaining({ msg: "configuration reloaded", secrets_changed: ["WEBHOOK_SECRET"] }),
    );
  });

  it("swaps a rotated Ed25519 signing key in: both keys sign, then the new one alone", async () => {
    const [first, second] = [nodeKeyPair(), nodeKeyPair()];
    const target = await receiver();
    const signed = configOf({ outbound_url: target.url, signing_key_env: "SIGNING_KEY" });
    const { service: running, url, logs } = await start(signed, { SIGNING_KEY: first.secretKey });
    const attemptOf = async (count: number) =>
      signedAttemptOf(await waitFor(() => target.replies[count - 1], 5_000, `reply ${count}`));
    expect((await post(url)).status).toBe(200);
    expect(verifiesV1a(await attemptOf(1), first.publicKey)).toBe(true);

    const both = `${second.secretKey} ${first.secretKey}`;
    await running.reload({
      config: signed,
      secrets: new Map([["webhook", OLD]]),
      env: (name) => (name === "SIGNING_KEY" ? both : undefined),
    });
    expect((await post(url)).status).toBe(200);
    const during = await attemptOf(2);
    expect([verifiesV1a(during, first.publicKey), verifiesV1a(during, second.publicKey)]).toEqual([true, true]);

    await running.reload({ config: signed, secrets: new Map([["webhook", OLD]]), env: () => second.secretKey });
    expect((await post(url)).status).toBe(200);
    const after = await attemptOf(3);
    expect([verifiesV1a(after, first.publicKey), verifiesV1a(after, second.publicKey)]).toEqual([false, true]);
    expect(JSON.stringify(logs)).not.toContain(second.secretKey.slice(5, 30));
  });

  it("refuses a reload whose outbound settings cannot be built, and carries on as it was", async () => {
    const target = await receiver();
    const { service: running, url, logs } = await start(configOf({ outbound_url: target.url }));
    const result = await running.reload({
      config: configOf({ outbound_url: target.url, signing_secret_env: "SIGNING_SECRET" }),
      secrets: new Map([["webhook", NEW]]),
      env: () => undefined,
    });
    expect(result).toMatchObject({ ok: false, reason: "unusable", message: expect.stringContaining("SIGNING_SECRET") });
    expect(logs).toContainEqual(
      expect.objectContaining({ level: "error", msg: expect.stringMatching(/^reload refused: .*SIGNING_SECRET/) }),
    );
    expect((await post(url, OLD)).status).toBe(200);
    const reply = await waitFor(() => target.replies[0], 5_000, "the reply");
    expect(reply.headers["webhook-signature"]).toBeUndefined();
  });

  it("answers with a rebuilt brain after a reload that changes the routes", async () => {
    const target = await receiver();
    const { service: running, url } = await start(configOf({ outbound_url: target.url }));
    const next = configOf(
      { outbound_url: target.url },
      { routes: [{ channel: "webhook", brain: "bot" }], brains: { bot: { type: "echo" } } },
    );
    const result = await running.reload({ config: next, secrets: new Map([["webhook", OLD]]), env: () => undefined });
    expect(result).toMatchObject({ ok: true, changed: ["routes", "brains"] });
    await post(url);
    const reply = await waitFor(() => target.replies[0], 5_000, "the reply");
    expect(reply.body).toMatchObject({ brain: "bot" });
  });

  it("applies a new max_connections to the open listener", async () => {
    const { service: running, url } = await start(configOf({}));
    const port = service?.listeners[0]?.port ?? 0;
    await running.reload({
      config: configOf({ max_connections: 1 }),
      secrets: new Map([["webhook", OLD]]),
      env: () => undefined,
    });
    const held = await openRawClient(port);
    clients.push(held);
    await expect(post(url)).rejects.toThrow();
    held.socket.destroy();
    await held.closed;
    await running.reload({ config: configOf({}), secrets: new Map([["webhook", OLD]]), env: () => undefined });
    expect((await post(url)).status).toBe(200);
  });
});
