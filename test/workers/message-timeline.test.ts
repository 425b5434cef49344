/**
 * The message timeline end to end inside workerd: messages sent through the Worker's `fetch` as
 * a client sends them, handed to their conversation's object as the queue consumer hands them,
 * and followed through the admin API (`GET /admin/messages/{id}`, `GET /admin/messages`,
 * `GET /admin/activity`) through a receiver outage, a dead letter and its replay.
 */
import {
  createExecutionContext,
  createMessageBatch,
  getQueueResult,
  runInDurableObject,
  waitOnExecutionContext,
} from "cloudflare:test";
import { afterEach, describe, expect, it, vi } from "vitest";
import worker from "../../src/workers/index.js";
import type { ReceiverObject } from "../../src/workers/receiver/receiver-object.js";
import { conversation, eventually, forgetConversations, handOver, objectsUse } from "./support/conversations.js";
import { captureLogs, fakeReceiver } from "./support/fake-receiver.js";
import { delivered } from "./support/queue-messages.js";
import { channelConfig, freshConversation, SECRET } from "./support/test-config.js";
import { type TestEnv, testEnv } from "./support/test-env.js";

const ADMIN_SECRET = "workers-admin-secret-abcdefghijklmnopqrstuvwxyz0123";
const ORIGIN = "https://channel.example";
const CLIENT = "203.0.113.9";

const receivers: DurableObjectStub<ReceiverObject>[] = [];

afterEach(async () => {
  await forgetConversations();
  // No receiver a test left down wakes a conversation of a later one.
  for (const stub of receivers.splice(0)) {
    await runInDurableObject(stub, async (_instance, state) => {
      await state.storage.deleteAll();
    });
  }
  vi.restoreAllMocks();
});

interface Timeline {
  message_id: string;
  conversation_id: string;
  status: string;
  waiting?: { reason: string; behind_message_id?: string; until?: string };
  events: Record<string, unknown>[];
}

/** The channel of {@link timelineEnv}: `webhook`, or one of the test's own. */
let channel = "webhook";

/**
 * The Worker with the admin API (and so the timeline) on, answering on `/webhook` with the echo
 * brain, for the channel named `name`.
 */
function timelineEnv(
  delivery: Record<string, unknown> = {},
  top: Record<string, unknown> = {},
  name = "webhook",
): TestEnv {
  channel = name;
  const config = channelConfig({
    delivery,
    top: { admin: { token_env: "ADMIN_SECRET" }, routes: [{ channel: name, brain: "echo" }], ...top },
  });
  const [first] = config.channels as Record<string, unknown>[];
  if (first !== undefined) first.name = name;
  return objectsUse(testEnv(config, { WEBHOOK_SECRET: SECRET, ADMIN_SECRET }));
}

/** One request through the Worker's `fetch`, with the work it leaves to `waitUntil` done. */
async function send(env: TestEnv, path: string, init: RequestInit, secret: string): Promise<Response> {
  const headers = new Headers(init.headers);
  headers.set("authorization", `Bearer ${secret}`);
  headers.set("cf-connecting-ip", CLIENT);
  if (init.body !== undefined) headers.set("content-type", "application/json");
  const ctx = createExecutionContext();
  const response = await worker.fetch(new Request(`${ORIGIN}${path}`, { ...init, headers }), env, ctx);
  await waitOnExecutionContext(ctx);
  return response;
}

/** Sends a message of `conversationId` as a client does; returns its id. */
async function accept(env: TestEnv, conversationId: string): Promise<string> {
  conversation(conversationId, channel);
  const body = JSON.stringify({ sender_id: "u1", conversation_id: conversationId, text: "hello" });
  const response = await send(env, "/webhook", { method: "POST", body }, SECRET);
  expect(response.status).toBe(200);
  return ((await response.json()) as { message_id: string }).message_id;
}

/** The queue consumer's hand-over of what the endpoint queued. */
async function consume(env: TestEnv): Promise<void> {
  await handOver(
    env,
    env.INBOUND.sent.splice(0).map((body) => delivered(body)),
  );
}

async function timelineOf(env: TestEnv, id: string): Promise<Timeline> {
  const response = await send(env, `/admin/messages/${id}`, {}, ADMIN_SECRET);
  expect(response.status).toBe(200);
  return (await response.json()) as Timeline;
}

async function listed(env: TestEnv, query: string): Promise<{ message_id: string; status: string }[]> {
  const response = await send(env, `/admin/messages?${query}`, {}, ADMIN_SECRET);
  expect(response.status).toBe(200);
  return ((await response.json()) as { items: { message_id: string; status: string }[] }).items;
}

const types = (timeline: Timeline) => timeline.events.map((event) => event.type);

describe("the message timeline on Workers", () => {
  it("follows a message through a receiver outage, and one that waits behind it, read by id and by conversation", async () => {
    captureLogs();
    fakeReceiver((_delivery, index) => new Response(null, { status: index === 0 ? 503 : 200 }));
    // The retry comes at the top of its backoff (2 s): long enough to look at both while they wait.
    vi.spyOn(Math, "random").mockReturnValue(0.999_999);
    const env = timelineEnv({ initial_delay_ms: 2000 });
    const conversationId = freshConversation();

    const first = await accept(env, conversationId);
    const queued = await timelineOf(env, first);
    expect(queued).toMatchObject({ message_id: first, conversation_id: conversationId, status: "accepted" });
    expect(queued.waiting).toEqual({ reason: "queued" });
    expect(queued.events).toEqual([{ type: "accepted", at: expect.any(String), client_address: CLIENT }]);

    await consume(env);
    await eventually(async () => expect((await timelineOf(env, first)).status).toBe("retrying"));
    const second = await accept(env, conversationId);
    await consume(env);
    const retrying = await timelineOf(env, first);
    expect(retrying.waiting).toMatchObject({ reason: "retry", until: expect.any(String) });
    expect(types(retrying)).toEqual(["accepted", "brain_call", "reply", "attempt", "retry"]);
    expect(retrying.events[3]).toMatchObject({ ok: false, status: 503, sequence: 1 });
    expect((await timelineOf(env, second)).waiting).toEqual({ reason: "behind_message", behind_message_id: first });

    await eventually(async () => expect((await timelineOf(env, second)).status).toBe("delivered"), 10_000);
    const done = await timelineOf(env, first);
    expect(done.status).toBe("delivered");
    expect(done.waiting).toBeUndefined();
    expect(types(done)).toEqual(["accepted", "brain_call", "reply", "attempt", "retry", "attempt", "delivered"]);
    expect(done.events[5]).toMatchObject({ ok: true, sequence: 1 });
    // No text is kept unless timeline.keep_text says so.
    expect(done.events.some((event) => "text" in event)).toBe(false);

    const newestFirst = [second, first];
    expect((await listed(env, `conversation_id=${conversationId}`)).map((item) => item.message_id)).toEqual(
      newestFirst,
    );
    expect(await listed(env, `conversation_id=${conversationId}&status=delivered&limit=1`)).toEqual([
      expect.objectContaining({ message_id: second, status: "delivered" }),
    ]);

    const activity = (await (await send(env, "/admin/activity", {}, ADMIN_SECRET)).json()) as {
      buckets: { accepted: number; delivered: number; retrying: number }[];
    };
    const counted = (series: "accepted" | "delivered" | "retrying") =>
      activity.buckets.reduce((sum, bucket) => sum + bucket[series], 0);
    expect(counted("accepted")).toBeGreaterThanOrEqual(2);
    expect(counted("delivered")).toBeGreaterThanOrEqual(2);
    expect(counted("retrying")).toBeGreaterThanOrEqual(1);
  });

  it("shows a dead letter, then its replay and the delivery after it", async () => {
    captureLogs();
    fakeReceiver((_delivery, index) => new Response(null, { status: index === 0 ? 400 : 200 }));
    const env = timelineEnv();
    const conversationId = freshConversation();
    const id = await accept(env, conversationId);
    await consume(env);
    await eventually(() => expect(env.DEAD_LETTERS.sent).toHaveLength(1));
    const batch = createMessageBatch("webhook-channel-dead-letters", [delivered(env.DEAD_LETTERS.sent[0])]);
    await worker.queue(batch, env);
    await getQueueResult(batch, createExecutionContext());

    const dead = await timelineOf(env, id);
    expect(dead.status).toBe("dead_letter");
    expect(types(dead)).toEqual(["accepted", "brain_call", "reply", "attempt", "dead_letter"]);
    expect(dead.events.at(-1)).toMatchObject({ error_code: "delivery_failed" });

    const replay = await send(env, `/admin/dead-letters/${id}/replay`, { method: "POST" }, ADMIN_SECRET);
    expect(replay.status).toBe(202);
    await eventually(async () => expect((await timelineOf(env, id)).status).toBe("delivered"));
    const replayed = await timelineOf(env, id);
    expect(types(replayed)).toEqual([
      "accepted",
      "brain_call",
      "reply",
      "attempt",
      "dead_letter",
      "replayed",
      "reply",
      "attempt",
      "delivered",
    ]);
    expect(await listed(env, `conversation_id=${conversationId}&status=delivered`)).toEqual([
      expect.objectContaining({ message_id: id }),
    ]);
  });

  it("says a message waits for its receiver while the receiver is down", async () => {
    captureLogs();
    fakeReceiver(() => new Response(null, { status: 503 }));
    const name = `timeline-${crypto.randomUUID()}`;
    const env = timelineEnv({ circuit_failures: 1, initial_delay_ms: 60_000 }, {}, name);
    receivers.push(env.RECEIVERS.get(env.RECEIVERS.idFromName(name)));
    const id = await accept(env, freshConversation());
    await consume(env);
    await eventually(async () => expect((await timelineOf(env, id)).status).toBe("waiting"));
    const waiting = await timelineOf(env, id);
    expect(waiting.waiting).toMatchObject({ reason: "receiver_down", until: expect.any(String) });
    expect(waiting.events.at(-1)).toMatchObject({ type: "waiting", reason: "receiver_down" });
  });

  it("keeps the texts when timeline.keep_text is on, and answers 404 for a message it never saw", async () => {
    captureLogs();
    fakeReceiver();
    const env = timelineEnv({}, { timeline: { keep_text: true } });
    const id = await accept(env, freshConversation());
    await consume(env);
    await eventually(async () => expect((await timelineOf(env, id)).status).toBe("delivered"));
    const { events } = await timelineOf(env, id);
    expect(events[0]).toMatchObject({ type: "accepted", text: "hello" });
    expect(events.find((event) => event.type === "reply")).toMatchObject({ text: expect.stringContaining("hello") });
    const unknown = await send(env, `/admin/messages/${crypto.randomUUID()}`, {}, ADMIN_SECRET);
    expect(unknown.status).toBe(404);
    expect(unknown.headers.get("content-type")).toContain("application/problem+json");
  });

  it("records nothing, and says the timeline is off, with timeline.retention_hours 0", async () => {
    captureLogs();
    const env = timelineEnv({}, { timeline: { retention_hours: 0 } });
    const id = await accept(env, freshConversation());
    const response = await send(env, `/admin/messages/${id}`, {}, ADMIN_SECRET);
    expect(response.status).toBe(404);
    expect(((await response.json()) as { detail: string }).detail).toContain("timeline is off");
  });
});
