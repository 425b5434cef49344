/**
 * Operator events in a running Node service (in this process, real sockets on port 0): a reload
 * moves them to a new URL, and a brain paused on the delivery thread is told from the main thread.
 */
import { randomBytes } from "node:crypto";
import { afterEach, describe, expect, it } from "vitest";
import type { Config } from "../../../src/core/config/config-schema.js";
import { validateConfig } from "../../../src/core/config/validate-config.js";
import { type Receiver, startReceiver } from "../../../src/node/receiver/sample-receiver.js";
import { type RunningService, startService } from "../../../src/node/service/start-service.js";
import { configDocument } from "../../support/configs.js";
import { deliveryWorkerEntry } from "../../support/delivery-worker-entry.js";
import { type JsonTestServer, startJsonServer } from "../../support/json-test-server.js";
import { createLogSink } from "../../support/log-sink.js";
import { waitFor } from "../../support/wait-for.js";

const SECRET = "operator-events-secret-0123456789";
const ENV: Record<string, string> = { OPS_SECRET: `whsec_${randomBytes(32).toString("base64")}` };

let service: RunningService | undefined;
const servers: { close(): Promise<void> }[] = [];

afterEach(async () => {
  await service?.stop(1_000);
  service = undefined;
  await Promise.all(servers.splice(0).map((server) => server.close()));
});

async function operator(): Promise<JsonTestServer> {
  const server = await startJsonServer(() => ({ status: 200 }));
  servers.push(server);
  return server;
}

async function receiver(status: () => number): Promise<Receiver> {
  const started = await startReceiver({ port: 0, status });
  servers.push(started);
  return started;
}

function configOf(outboundUrl: string, extra: Record<string, unknown>): Config {
  const result = validateConfig(
    configDocument({ bind: "127.0.0.1:0", outbound_url: outboundUrl, delivery: { initial_delay_ms: 20 } }, extra),
  );
  if (!result.ok) throw new Error(JSON.stringify(result.problems));
  return result.config;
}

async function start(config: Config): Promise<string> {
  const { logger } = createLogSink("info");
  service = await startService({
    config,
    secrets: new Map([["webhook", SECRET]]),
    logger,
    env: (name) => ENV[name],
    ...(config.delivery_thread ? { deliveryThread: { entry: deliveryWorkerEntry(), env: ENV } } : {}),
  });
  return `http://127.0.0.1:${service.listeners[0]?.port}/webhook`;
}

async function post(url: string, text: string): Promise<void> {
  const response = await fetch(url, {
    method: "POST",
    headers: { authorization: `Bearer ${SECRET}`, "content-type": "application/json" },
    body: JSON.stringify({ sender_id: "alice", text }),
  });
  expect(response.status).toBe(200);
}

const typesAt = (server: JsonTestServer) => server.requests.map((request) => (request.body as { type: string }).type);

describe("operator events in a running service", () => {
  it("go to the new URL after a reload, and a reload whose signing variable is unset is refused", async () => {
    const first = await operator();
    const second = await operator();
    const refusing = await receiver(() => 400);
    const settings = (server: JsonTestServer) => ({
      operator_events: { url: `${server.origin}/ops`, signing_secret_env: "OPS_SECRET" },
    });
    const url = await start(configOf(refusing.url, settings(first)));
    await post(url, "one");
    await waitFor(() => (first.requests.length === 1 ? true : undefined), 5_000, "the first event");

    const reloaded = await service?.reload({
      config: configOf(refusing.url, settings(second)),
      secrets: new Map([["webhook", SECRET]]),
      env: (name) => ENV[name],
    });
    expect(reloaded).toMatchObject({ ok: true, changed: ["operator_events.url"] });
    await post(url, "two");
    await waitFor(() => (second.requests.length === 1 ? true : undefined), 5_000, "the event at the new URL");
    expect(typesAt(first)).toEqual(["message.dead_lettered"]);
    expect(typesAt(second)).toEqual(["message.dead_lettered"]);

    const unset = await service?.reload({
      config: configOf(refusing.url, {
        operator_events: { url: `${first.origin}/ops`, signing_secret_env: "NOT_SET" },
      }),
      secrets: new Map([["webhook", SECRET]]),
      env: (name) => ENV[name],
    });
    expect(unset).toMatchObject({
      ok: false,
      reason: "unusable",
      message: "environment variable NOT_SET (operator_events) is not set",
    });
  });

  it("tell a brain's pause met on the delivery thread, from the main thread", async () => {
    const ops = await operator();
    let calls = 0;
    const bot = await startJsonServer(() => (calls++ === 0 ? { status: 503 } : { status: 200, body: { text: "hi" } }));
    servers.push(bot);
    const working = await receiver(() => 200);
    const url = await start(
      configOf(working.url, {
        delivery_thread: true,
        routes: [{ channel: "webhook", brain: "bot" }],
        brains: { bot: { type: "http", url: `${bot.origin}/bot` } },
        operator_events: { url: `${ops.origin}/ops`, signing_secret_env: "OPS_SECRET", events: ["brain.paused"] },
      }),
    );
    await post(url, "hello");
    await waitFor(() => (ops.requests.length === 1 ? true : undefined), 5_000, "brain.paused");
    expect(ops.requests[0]?.body).toMatchObject({ type: "brain.paused", data: { brain: "bot", status: 503 } });
  });
});
