import { createExecutionContext, createMessageBatch, getQueueResult, runInDurableObject } from "cloudflare:test";
import { env as poolEnv } from "cloudflare:workers";
import { afterEach, describe, expect, it, vi } from "vitest";
import type { DeadLetterItem } from "../../src/core/admin/dead-letter-item.js";
import type { DeadLetter } from "../../src/core/dead-letters/dead-letter.js";
import { DEAD_LETTER_STORE_NAME } from "../../src/workers/dead-letters/dead-letter-object.js";
import worker from "../../src/workers/index.js";
import { conversation, eventually, forgetConversations, handOver, objectsUse } from "./support/conversations.js";
import { captureLogs, type Delivery, fakeReceiver } from "./support/fake-receiver.js";
import { delivered, queuedMessage } from "./support/queue-messages.js";
import { channelConfig, freshConversation, OUTBOUND_URL, SECRET } from "./support/test-config.js";
import { type TestEnv, testEnv } from "./support/test-env.js";

const ADMIN_SECRET = "workers-admin-secret-abcdefghijklmnopqrstuvwxyz0123";
const BOT_URL = "https://bot.example/answer";
const ORIGIN = "https://channel.example";

const store = () => poolEnv.DEAD_LETTER_STORE.get(poolEnv.DEAD_LETTER_STORE.idFromName(DEAD_LETTER_STORE_NAME));

afterEach(async () => {
  await forgetConversations();
  vi.restoreAllMocks();
});

/**
 * A configuration with the admin API on, one channel named `channel` (unique per test: the
 * store is one object for every test of this isolate), answered by an `http` brain.
 */
function adminEnv(channel: string, admin: Record<string, unknown> = {}): TestEnv {
  const config = channelConfig({
    top: {
      admin: { token_env: "ADMIN_SECRET", ...admin },
      brains: { bot: { type: "http", url: BOT_URL, max_history: 0 } },
      routes: [{ channel, brain: "bot" }],
    },
  });
  const [first] = config.channels as Record<string, unknown>[];
  if (first !== undefined) first.name = channel;
  return objectsUse(testEnv(config, { WEBHOOK_SECRET: SECRET, ADMIN_SECRET }));
}

function admin(env: TestEnv, path: string, init: RequestInit = {}, secret = ADMIN_SECRET): Promise<Response> {
  const headers = new Headers(init.headers);
  headers.set("authorization", `Bearer ${secret}`);
  return worker.fetch(new Request(`${ORIGIN}${path}`, { ...init, headers }), env);
}

/** A bot that answers every message (with `answer`), and a receiver that answers replies with `status(n)`. */
function botAndReceiver(
  status: (index: number) => number,
  answer: (text: string) => string = (text) => `answer to ${text}`,
): { botCalls: Delivery[]; replies: Delivery[] } {
  const botCalls: Delivery[] = [];
  const replies: Delivery[] = [];
  fakeReceiver((delivery) => {
    if (delivery.url === BOT_URL) {
      botCalls.push(delivery);
      const { text } = delivery.body.message as { text?: string };
      return Response.json({ text: answer(text ?? "") });
    }
    expect(delivery.url).toBe(OUTBOUND_URL);
    replies.push(delivery);
    return new Response(null, { status: status(replies.length - 1) });
  });
  return { botCalls, replies };
}

/** Runs a message through its conversation's object and the dead-letter queue's consumer. */
async function deadLetterOf(env: TestEnv, channel: string, text: string): Promise<string> {
  const queued = queuedMessage({ conversationId: freshConversation(), channel, text });
  conversation(queued.message.conversationId, channel);
  const before = env.DEAD_LETTERS.sent.length;
  await handOver(env, [delivered(queued)]);
  await eventually(() => expect(env.DEAD_LETTERS.sent.length).toBeGreaterThan(before));
  const batch = createMessageBatch("webhook-channel-dead-letters", [delivered(env.DEAD_LETTERS.sent.at(-1))]);
  await worker.queue(batch, env);
  await getQueueResult(batch, createExecutionContext());
  return queued.id;
}

/** A dead letter as the consumer would keep it, for tests of the list itself. */
function letter(channel: string, diedAt: number, text = "hello"): DeadLetter {
  return {
    job: { message: queuedMessage({ conversationId: freshConversation(), channel, text }), delivered: 0, attempts: 3 },
    error: { code: "brain_failed", message: "the brain answered 500", retryable: true, status: 500 },
    attempts: 3,
    diedAt,
  };
}

async function listed(env: TestEnv, query: string): Promise<{ items: DeadLetterItem[]; next_cursor: string | null }> {
  const response = await admin(env, `/admin/dead-letters?${query}`);
  expect(response.status).toBe(200);
  return (await response.json()) as { items: DeadLetterItem[]; next_cursor: string | null };
}

describe("the admin API inside workerd", () => {
  it("is a 404 on every /admin/ path when admin is not configured", async () => {
    captureLogs();
    const env = testEnv(channelConfig(), { WEBHOOK_SECRET: SECRET, ADMIN_SECRET });
    const response = await admin(env, "/admin/dead-letters");
    expect(response.status).toBe(404);
  });

  it("answers 401 without the admin secret, and to a channel's secret", async () => {
    captureLogs();
    const env = adminEnv(`admin-${crypto.randomUUID()}`);
    const none = await worker.fetch(new Request(`${ORIGIN}/admin/dead-letters`), env);
    expect(none.status).toBe(401);
    expect(none.headers.get("content-type")).toContain("application/problem+json");
    expect((await admin(env, "/admin/dead-letters", {}, SECRET)).status).toBe(401);
  });

  it("refuses to start when the admin secret is a channel's", async () => {
    captureLogs();
    const env = testEnv(channelConfig({ top: { admin: { token_env: "ADMIN_SECRET" } } }), {
      WEBHOOK_SECRET: SECRET,
      ADMIN_SECRET: SECRET,
    });
    const response = await admin(env, "/admin/dead-letters", {}, SECRET);
    expect(response.status).toBe(500);
  });

  it("lists a dead letter the queue's consumer kept, shows it, and deletes it", async () => {
    captureLogs();
    botAndReceiver(() => 400);
    const channel = `admin-${crypto.randomUUID()}`;
    const env = adminEnv(channel);
    const id = await deadLetterOf(env, channel, "refused reply");

    const page = await listed(env, `channel=${channel}`);
    expect(page.next_cursor).toBeNull();
    expect(page.items).toHaveLength(1);
    const [item] = page.items;
    expect(item).toMatchObject({
      id,
      channel,
      message_id: id,
      stage: "reply",
      attempts: 1,
      error: { code: "delivery_failed", status: 400 },
      message: { sender_id: "u1", text: "refused reply" },
      replies: [{ sequence: 1, delivered: false, body: { text: "answer to refused reply" } }],
    });
    expect(item?.failed_at).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);

    const shown = await admin(env, `/admin/dead-letters/${id}`);
    expect(await shown.json()).toEqual(item);
    expect((await admin(env, `/admin/dead-letters/${id}`, { method: "DELETE" })).status).toBe(204);
    const gone = await admin(env, `/admin/dead-letters/${id}`);
    expect(gone.status).toBe(404);
    expect((await admin(env, `/admin/dead-letters/${id}`, { method: "DELETE" })).status).toBe(404);
    expect((await listed(env, `channel=${channel}`)).items).toEqual([]);
  });

  it("replays a dead letter: it leaves the list, its kept reply is posted again with the next sequence, and the brain is not asked again", async () => {
    captureLogs();
    const { botCalls, replies } = botAndReceiver((index) => (index === 0 ? 400 : 200));
    const channel = `admin-${crypto.randomUUID()}`;
    const env = adminEnv(channel);
    const id = await deadLetterOf(env, channel, "try me again");
    expect(botCalls).toHaveLength(1);

    const response = await admin(env, `/admin/dead-letters/${id}/replay`, { method: "POST" });
    expect(response.status).toBe(202);
    expect(await response.json()).toEqual({ replayed: 1 });
    expect((await listed(env, `channel=${channel}`)).items).toEqual([]);

    await eventually(() => expect(replies).toHaveLength(2));
    // The same reply (same id) with the conversation's next sequence: the replay joined the end of its lane.
    const first = replies[0]?.body ?? {};
    expect(replies[1]?.body).toEqual({ ...first, sequence: Number(first.sequence) + 1 });
    expect(botCalls).toHaveLength(1);
    expect((await admin(env, `/admin/dead-letters/${id}/replay`, { method: "POST" })).status).toBe(404);
  });

  it("keeps, lists and replays a dead letter whose reply is longer than a stored value holds, posting the same reply", async () => {
    captureLogs();
    // A brain's answer of 2.5 million characters: its job, its parked letter and its replay are
    // each too long for one Durable Object value, and are kept in pieces.
    const long = "x".repeat(2_500_000);
    const { replies } = botAndReceiver(
      (index) => (index === 0 ? 400 : 200),
      () => long,
    );
    const channel = `admin-${crypto.randomUUID()}`;
    const env = adminEnv(channel);
    const id = await deadLetterOf(env, channel, "write me a book");
    expect((await listed(env, `channel=${channel}`)).items.map((item) => item.id)).toEqual([id]);
    expect((await admin(env, `/admin/dead-letters/${id}/replay`, { method: "POST" })).status).toBe(202);
    await eventually(() => expect(replies).toHaveLength(2));
    expect(replies[1]?.body).toEqual({ ...replies[0]?.body, sequence: Number(replies[0]?.body.sequence) + 1 });
    expect(replies[1]?.body.text).toBe(long);
  });

  it("replays every dead letter of a channel in one request, and leaves other channels' alone", async () => {
    captureLogs();
    const { replies } = botAndReceiver((index) => (index < 2 ? 400 : 200));
    const channel = `admin-${crypto.randomUUID()}`;
    const other = `admin-${crypto.randomUUID()}`;
    const env = adminEnv(channel);
    await deadLetterOf(env, channel, "one");
    await deadLetterOf(env, channel, "two");
    await store().keep(letter(other, Date.now()));

    const response = await admin(env, "/admin/dead-letters/replay", {
      method: "POST",
      body: JSON.stringify({ channel }),
    });
    expect(await response.json()).toEqual({ replayed: 2 });
    await eventually(() => expect(replies).toHaveLength(4));
    expect(replies.slice(2).map((reply) => reply.body.text)).toEqual(
      expect.arrayContaining(["answer to one", "answer to two"]),
    );
    expect((await listed(env, `channel=${other}`)).items).toHaveLength(1);
  });

  it("pages oldest first with limit and an opaque cursor, across channels", async () => {
    captureLogs();
    const env = adminEnv(`admin-${crypto.randomUUID()}`);
    const channel = `admin-${crypto.randomUUID()}`;
    const base = Date.now() - 60_000;
    const letters = [letter(channel, base + 2), letter(channel, base), letter(channel, base + 1)];
    for (const kept of letters) await store().keep(kept);
    const oldestFirst = [letters[1], letters[2], letters[0]].map((kept) => kept?.job.message.id);

    const first = await listed(env, `channel=${channel}&limit=2`);
    expect(first.items.map((item) => item.id)).toEqual(oldestFirst.slice(0, 2));
    expect(first.next_cursor).toMatch(/^[A-Za-z0-9_-]+$/);
    const second = await listed(env, `channel=${channel}&limit=2&cursor=${first.next_cursor ?? ""}`);
    expect(second.items.map((item) => item.id)).toEqual(oldestFirst.slice(2));
    expect(second.next_cursor).toBeNull();

    // Without `channel` the same letters come in the same order among every channel's.
    const all: string[] = [];
    let cursor: string | null = "";
    while (cursor !== null) {
      const page = await listed(env, `limit=500${cursor === "" ? "" : `&cursor=${cursor}`}`);
      all.push(...page.items.map((item) => item.id));
      cursor = page.next_cursor;
    }
    expect(all.filter((id) => oldestFirst.includes(id))).toEqual(oldestFirst);
    expect((await admin(env, "/admin/dead-letters?limit=501")).status).toBe(400);
  });

  it("keeps at most admin.max_dead_letters per channel, dropping the oldest with a warning", async () => {
    const { lines } = captureLogs();
    const channel = `admin-${crypto.randomUUID()}`;
    const env = adminEnv(channel, { max_dead_letters: 2 });
    const base = Date.now();
    const letters = [letter(channel, base), letter(channel, base + 1), letter(channel, base + 2)];
    for (const kept of letters) await store().keep(kept);

    const ids = (await listed(env, `channel=${channel}`)).items.map((item) => item.id);
    expect(ids).toEqual([letters[1]?.job.message.id, letters[2]?.job.message.id]);
    const warning = lines.find(
      (line) => line.msg === "dead letters over admin.max_dead_letters: the oldest were dropped",
    );
    expect(warning).toMatchObject({ level: "warn", channel, max_dead_letters: 2, dropped: 1 });
  });

  it("keeps a letter larger than one SQLite value whole", async () => {
    captureLogs();
    const env = adminEnv(`admin-${crypto.randomUUID()}`);
    const big = letter(`admin-${crypto.randomUUID()}`, Date.now(), "é".repeat(1_048_576));
    await store().keep(big);
    const response = await admin(env, `/admin/dead-letters/${big.job.message.id}`);
    const item = (await response.json()) as DeadLetterItem;
    expect(item.message.text).toBe(big.job.message.message.text);
  });

  it("counts the stored dead letters in /readyz", async () => {
    captureLogs();
    const env = adminEnv(`admin-${crypto.randomUUID()}`);
    const count = () =>
      runInDurableObject(
        store(),
        (_instance, state) =>
          state.storage.sql.exec<{ n: number }>("SELECT COUNT(*) AS n FROM dead_letters WHERE replay_at IS NULL").one()
            .n,
      );
    await store().keep(letter(`admin-${crypto.randomUUID()}`, Date.now()));
    const response = await worker.fetch(new Request(`${ORIGIN}/readyz`), env);
    const body = (await response.json()) as { status: string; dead_letters: number };
    expect(body.status).toBe("ready");
    expect(body.dead_letters).toBe(await count());
    expect(body.dead_letters).toBeGreaterThan(0);
  });
});
