/**
 * A reload while a brain call is under way: the call finishes on the brain it began with, and
 * the reply it makes is posted with the settings of its moment, the new `outbound_url`.
 */
import { afterEach, describe, expect, it } from "vitest";
import type { Config } from "../../../src/core/config/config-schema.js";
import { validateConfig } from "../../../src/core/config/validate-config.js";
import { type ReceivedReply, type Receiver, startReceiver } from "../../../src/node/receiver/sample-receiver.js";
import { type RunningService, startService } from "../../../src/node/service/start-service.js";
import { configDocument } from "../../support/configs.js";
import { startJsonServer } from "../../support/json-test-server.js";
import { createLogSink } from "../../support/log-sink.js";
import { waitFor } from "../../support/wait-for.js";

const OLD = "old-secret-0123456789";

let service: RunningService | undefined;
const receivers: Receiver[] = [];

afterEach(async () => {
  await service?.stop(1_000);
  service = undefined;
  await Promise.all(receivers.splice(0).map((receiver) => receiver.close()));
});

function configOf(webhook: Record<string, unknown>, extra: Record<string, unknown> = {}): Config {
  const result = validateConfig(configDocument({ bind: "127.0.0.1:0", ...webhook }, extra));
  if (!result.ok) throw new Error(JSON.stringify(result.problems));
  return result.config;
}

async function receiver(): Promise<{ url: string; replies: ReceivedReply[] }> {
  const replies: ReceivedReply[] = [];
  const started = await startReceiver({ port: 0, onReply: (reply) => replies.push(reply) });
  receivers.push(started);
  return { url: started.url, replies };
}

async function start(config: Config): Promise<{ service: RunningService; url: string }> {
  const { logger } = createLogSink();
  service = await startService({ config, secrets: new Map([["webhook", OLD]]), logger, env: () => undefined });
  return { service, url: `http://127.0.0.1:${service.listeners[0]?.port}/webhook` };
}

function post(url: string): Promise<Response> {
  return fetch(url, {
    method: "POST",
    headers: { authorization: `Bearer ${OLD}`, "content-type": "application/json" },
    body: JSON.stringify({ sender_id: "alice", text: "hello" }),
  });
}

describe("a reload during a brain call", () => {
  it("posts a reply whose brain call began before the reload to the new outbound_url", async () => {
    const before = await receiver();
    const after = await receiver();
    let release: () => void = () => undefined;
    const released = new Promise<void>((resolve) => {
      release = resolve;
    });
    let called: () => void = () => undefined;
    const calling = new Promise<void>((resolve) => {
      called = resolve;
    });
    // A slow brain, as a model is: its answer waits until the reload is made.
    const bot = await startJsonServer(async (request) => {
      called();
      await released;
      const { message } = request.body as { message: { text: string } };
      return { status: 200, body: { text: `re: ${message.text}` } };
    });
    try {
      const brains = {
        routes: [{ channel: "webhook", brain: "slow" }],
        brains: { slow: { type: "http", url: `${bot.origin}/bot` } },
      };
      const { service: running, url } = await start(configOf({ outbound_url: before.url }, brains));
      expect((await post(url)).status).toBe(200);
      await calling;
      const result = await running.reload({
        config: configOf({ outbound_url: after.url }, brains),
        secrets: new Map([["webhook", OLD]]),
        env: () => undefined,
      });
      expect(result).toMatchObject({ ok: true, changed: ["channels[0].webhook.outbound_url"] });
      release();
      const reply = await waitFor(() => after.replies[0], 5_000, "the reply at the new receiver");
      expect(reply.body).toMatchObject({ text: "re: hello" });
      expect(before.replies).toHaveLength(0);
    } finally {
      release();
      await bot.close();
    }
  });
});
