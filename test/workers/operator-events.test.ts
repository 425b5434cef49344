/**
 * Operator events inside workerd: the conversation object raises `message.dead_lettered` when it
 * buries a job (and the brains' pauses its runs met), and the channel's receiver object `receiver.down` and `receiver.up` as it makes
 * those changes; each is POSTed with the isolate's `fetch`, signed as replies are, to a real
 * operator endpoint (the scripted upstream, on Node), while `waitUntil` keeps the object alive.
 */
import { runInDurableObject } from "cloudflare:test";
import { afterEach, describe, expect, it, vi } from "vitest";
import type { ReceiverObject } from "../../src/workers/receiver/receiver-object.js";
import type { ScriptedRequest } from "../shared/scripted-upstream-wire.js";
import { conversation, eventually, forgetConversations, handOver, objectsUse } from "./support/conversations.js";
import { captureLogs } from "./support/fake-receiver.js";
import { delivered, queuedMessage } from "./support/queue-messages.js";
import { scenario } from "./support/scripted-upstream-client.js";
import { SECRET } from "./support/test-config.js";
import { type TestEnv, testEnv } from "./support/test-env.js";

const OPS_SECRET = `whsec_${btoa("o".repeat(32))}`;
const receivers: DurableObjectStub<ReceiverObject>[] = [];

afterEach(async () => {
  await forgetConversations();
  for (const stub of receivers.splice(0)) {
    await runInDurableObject(stub, async (_instance, state) => {
      await state.storage.deleteAll();
    });
  }
  vi.restoreAllMocks();
});

/** A channel of its own, posting replies to `outboundUrl` and operator events to `opsUrl`. */
function eventsEnv(
  outboundUrl: string,
  opsUrl: string,
  delivery: Record<string, unknown>,
  brain: Record<string, unknown> | undefined = undefined,
) {
  const channel = `events-${crypto.randomUUID()}`;
  const config = {
    channels: [
      {
        type: "webhook",
        name: channel,
        token_env: "WEBHOOK_SECRET",
        webhook: { path: "/events", outbound_url: outboundUrl, delivery },
      },
    ],
    routes: [{ channel, brain: brain === undefined ? "echo" : "bot" }],
    ...(brain === undefined ? {} : { brains: { bot: brain } }),
    operator_events: { url: opsUrl, signing_secret_env: "OPS_SECRET" },
  };
  const env = objectsUse(testEnv(config, { WEBHOOK_SECRET: SECRET, OPS_SECRET }));
  receivers.push(env.RECEIVERS.get(env.RECEIVERS.idFromName(channel)));
  return { env, channel };
}

async function send(env: TestEnv, channel: string, conversationId: string): Promise<void> {
  conversation(conversationId, channel);
  await handOver(env, [delivered(queuedMessage({ conversationId, channel, text: conversationId }))]);
}

/** Whether the v1 signature of an event verifies with the whsec_ secret over id.timestamp.body. */
async function verifiesV1(request: ScriptedRequest): Promise<boolean> {
  const bytes = Uint8Array.from(atob(OPS_SECRET.slice(6)), (character) => character.charCodeAt(0));
  const key = await crypto.subtle.importKey("raw", bytes, { name: "HMAC", hash: "SHA-256" }, false, ["sign"]);
  const { headers } = request;
  const content = `${headers["webhook-id"]}.${headers["webhook-timestamp"]}.${JSON.stringify(request.body)}`;
  const signature = new Uint8Array(await crypto.subtle.sign("HMAC", key, new TextEncoder().encode(content)));
  return headers["webhook-signature"] === `v1,${btoa(String.fromCharCode(...signature))}`;
}

const typeOf = (request: ScriptedRequest) => (request.body as { type: string }).type;

describe("operator events inside workerd", () => {
  it("POSTs a signed message.dead_lettered from the conversation object that buried the job", async () => {
    captureLogs();
    const receiver = await scenario({ status: 400 });
    const ops = await scenario({ status: 204 });
    const { env, channel } = eventsEnv(`${receiver.url}/replies`, `${ops.url}/ops`, {});
    await send(env, channel, "refused");
    await eventually(async () => expect(await ops.requests()).toHaveLength(1));
    const [request] = await ops.requests();
    if (request === undefined) throw new Error("no event");
    expect(request.body).toMatchObject({
      type: "message.dead_lettered",
      channel,
      data: { conversation_id: "refused", step: "delivery", status: 400, attempts: 1 },
    });
    expect(request.headers["webhook-id"]).toBe((request.body as { id: string }).id);
    expect(await verifiesV1(request)).toBe(true);
  });

  it("POSTs receiver.down and receiver.up once each, from the channel's receiver object", async () => {
    captureLogs();
    const receiver = await scenario({ status: 503 });
    const ops = await scenario({ status: 204 });
    const { env, channel } = eventsEnv(`${receiver.url}/replies`, `${ops.url}/ops`, {
      circuit_failures: 2,
      initial_delay_ms: 50,
      max_delay_ms: 200,
    });
    await send(env, channel, "outage-0");
    await send(env, channel, "outage-1");
    await eventually(async () => expect((await ops.requests()).map(typeOf)).toEqual(["receiver.down"]));
    await receiver.script({ status: 200 });
    await eventually(async () => expect((await ops.requests()).map(typeOf)).toEqual(["receiver.down", "receiver.up"]));
    const [down, up] = await ops.requests();
    expect(down?.body).toMatchObject({ channel, data: { outbound_url: `${receiver.url}/replies`, failures: 2 } });
    expect(up?.body).toMatchObject({ channel, data: { outbound_url: `${receiver.url}/replies` } });
    for (const request of await ops.requests()) expect(await verifiesV1(request)).toBe(true);
    // The conversations it woke deliver their replies (before the test's cleanup deletes them).
    await eventually(async () => {
      const answered = (await receiver.requests()).filter((request) => request.status === 200);
      expect(answered.map((request) => (request.body as { text: string }).text).sort()).toEqual([
        "outage-0",
        "outage-1",
      ]);
    });
  });

  it("POSTs brain.paused from the conversation object whose run met the bot's 429", async () => {
    captureLogs();
    const receiver = await scenario({ status: 200 });
    const bot = await scenario({ status: 429, headers: { "retry-after": "1" } }, { status: 200, body: { text: "hi" } });
    const ops = await scenario({ status: 204 });
    const { env, channel } = eventsEnv(
      `${receiver.url}/replies`,
      `${ops.url}/ops`,
      { initial_delay_ms: 50 },
      {
        type: "http",
        url: `${bot.url}/bot`,
      },
    );
    await send(env, channel, "paused");
    await eventually(async () => expect((await ops.requests()).map(typeOf)).toContain("brain.paused"));
    const paused = (await ops.requests()).find((request) => typeOf(request) === "brain.paused");
    expect(paused?.body).toMatchObject({ data: { brain: "bot", status: 429 } });
    expect(paused === undefined ? false : await verifiesV1(paused)).toBe(true);
    // Asked again once the pause is over, the bot answers and the reply is delivered.
    await eventually(async () => expect(await receiver.requests()).toHaveLength(1), 5_000);
  });
});
