import { abortAllDurableObjects, runInDurableObject } from "cloudflare:test";
import { env as poolEnv } from "cloudflare:workers";
import { afterEach, describe, expect, it, vi } from "vitest";
import { CONVERSATION_TTL_MS } from "../../src/workers/conversation/conversation-expiry.js";
import { DEAD_LETTER_STORE_NAME } from "../../src/workers/dead-letters/dead-letter-object.js";
import {
  alarmOf,
  conversation,
  eventually,
  forgetConversations,
  handOver,
  objectsUse,
  usageOf,
  waiting,
} from "./support/conversations.js";
import { captureLogs, type Delivery, fakeReceiver } from "./support/fake-receiver.js";
import { replaceObjectWaits } from "./support/object-environment.js";
import { delivered, queuedMessage } from "./support/queue-messages.js";
import { channelConfig, freshConversation, OUTBOUND_URL, SECRET } from "./support/test-config.js";
import { testEnv } from "./support/test-env.js";

const BOT_URL = "https://bot.example/chat";

afterEach(async () => {
  await forgetConversations();
  replaceObjectWaits({});
  vi.restoreAllMocks();
});

describe("the conversation's Durable Object as the sequencer", () => {
  it("runs one job at a time: an alarm that comes while a job runs waits for it, and the brain never sees two turns at once", async () => {
    captureLogs();
    let active = 0;
    let mostActive = 0;
    const histories: number[] = [];
    const replies: Delivery[] = [];
    vi.spyOn(globalThis, "fetch").mockImplementation(async (input, init) => {
      const request = new Request(input, init);
      const body = (await request.json()) as Record<string, unknown>;
      if (request.url === BOT_URL) {
        active += 1;
        mostActive = Math.max(mostActive, active);
        histories.push((body.history as unknown[]).length);
        await new Promise((resolve) => setTimeout(resolve, 40));
        active -= 1;
        return Response.json({ text: `answer to ${String((body.message as { text: string }).text)}` });
      }
      expect(request.url).toBe(OUTBOUND_URL);
      replies.push({ url: request.url, headers: Object.fromEntries(request.headers), body });
      return new Response(null, { status: 200 });
    });
    const config = channelConfig({
      top: {
        brains: { bot: { type: "http", url: BOT_URL, max_history: 20 } },
        routes: [{ channel: "webhook", brain: "bot" }],
      },
    });
    const env = objectsUse(testEnv(config, { WEBHOOK_SECRET: SECRET }));
    const conversationId = freshConversation();
    const stub = conversation(conversationId);
    const texts = ["one", "two", "three", "four"];
    // The hand-over starts the lane's run, which outlasts it, so it is awaited at the end.
    const handedOver = handOver(
      env,
      texts.map((text) => delivered(queuedMessage({ conversationId, text }))),
    );
    // Extra alarms, as a retried or duplicated alarm would come, while the bot is answering.
    await eventually(() => expect(active).toBe(1));
    await Promise.all([1, 2, 3].map(() => runInDurableObject(stub, (instance) => instance.alarm())));
    await handedOver;

    await eventually(() => expect(replies).toHaveLength(4));
    expect(mostActive).toBe(1);
    // Each turn sees the ones before it: user and assistant per earlier message.
    expect(histories).toEqual([0, 2, 4, 6]);
    expect(replies.map((reply) => [reply.body.text, reply.body.sequence])).toEqual(
      texts.map((text, index) => [`answer to ${text}`, index + 1]),
    );
  });

  it("leaves a run that outlasts the hand-over to the alarm: the consumer acks at once, the reply goes out when the receiver answers", async () => {
    captureLogs();
    let answer: () => void = () => undefined;
    const answered = new Promise<void>((resolve) => (answer = resolve));
    const { deliveries } = fakeReceiver(async () => {
      await answered;
      return new Response(null, { status: 200 });
    });
    const env = objectsUse(testEnv(channelConfig(), { WEBHOOK_SECRET: SECRET }));
    const queued = queuedMessage({ conversationId: freshConversation() });
    const stub = conversation(queued.message.conversationId);

    const result = await handOver(env, [delivered(queued)]);
    expect(result.explicitAcks).toHaveLength(1);
    await eventually(() => expect(deliveries).toHaveLength(1));
    // The POST still waits for its answer, and an alarm invocation sees the run through.
    await eventually(async () => expect((await usageOf(stub)).alarmRuns).toBe(1));
    answer();
    await eventually(async () =>
      expect(await alarmOf(stub)).toBeGreaterThan(Date.now() + CONVERSATION_TTL_MS - 3_600_000),
    );
    expect(deliveries).toHaveLength(1);
    expect(await waiting(stub)).toBe(0);
  });

  it("takes a run back after its object stopped mid-POST past the hand-over: the same reply, with its number, goes out again", async () => {
    captureLogs();
    // The first POST gets no answer before the object stops.
    let answer: () => void = () => undefined;
    const answered = new Promise<void>((resolve) => (answer = resolve));
    const { deliveries } = fakeReceiver(async (_delivery, index) => {
      if (index === 0) await answered;
      return new Response(null, { status: 200 });
    });
    const env = objectsUse(testEnv(channelConfig(), { WEBHOOK_SECRET: SECRET }));
    const queued = queuedMessage({ conversationId: freshConversation() });
    const stub = () => conversation(queued.message.conversationId);

    expect((await handOver(env, [delivered(queued)])).explicitAcks).toHaveLength(1);
    await eventually(() => expect(deliveries).toHaveLength(1));
    await abortAllDurableObjects();
    // The alarm the hand-over left, as the platform fires it again on a new instance.
    await runInDurableObject(stub(), (instance) => instance.alarm());

    await eventually(() => expect(deliveries).toHaveLength(2));
    const [first, again] = deliveries.map((delivery) => delivery.body);
    expect(again?.message_id).toBe(first?.message_id);
    expect(again?.sequence).toBe(1);
    expect(await waiting(stub())).toBe(0);
    answer();
    // The platform tries the stopped alarm again: it finds nothing left, and the expiry's alarm is set.
    await eventually(async () =>
      expect(await alarmOf(stub())).toBeGreaterThan(Date.now() + CONVERSATION_TTL_MS - 3_600_000),
    );
  });

  it("answers first a message accepted earlier that the queue hands over later, before either ran", async () => {
    captureLogs();
    const { deliveries } = fakeReceiver();
    const env = objectsUse(testEnv(channelConfig(), { WEBHOOK_SECRET: SECRET }));
    const conversationId = freshConversation();
    // The two hand-overs below must meet within the order hold, which a loaded machine (the whole
    // suite at once) can outlast: a longer one, set before the object starts, which woken first
    // then reads it, so starting the object counts against neither.
    replaceObjectWaits({ orderHoldMs: 2_000 });
    expect(await waiting(conversation(conversationId) as DurableObjectStub<never>)).toBe(0);
    const now = Date.now();
    const later = queuedMessage({ conversationId, text: "later", receivedAt: now });
    const earlier = queuedMessage({ conversationId, text: "earlier", receivedAt: now - 50 });
    // Two consumer invocations at once, as the platform runs them: the later message's hand-over
    // waits out its order hold, and the earlier one arrives meanwhile.
    await Promise.all([handOver(env, [delivered(later)]), handOver(env, [delivered(earlier)])]);

    await eventually(() => expect(deliveries).toHaveLength(2));
    expect(deliveries.map((delivery) => [delivery.body.text, delivery.body.sequence])).toEqual([
      ["earlier", 1],
      ["later", 2],
    ]);
  });

  it("settles conversations independently: one answered, one retrying, one dead", async () => {
    captureLogs();
    const { deliveries } = fakeReceiver(
      (delivery) =>
        new Response(null, {
          status: delivery.body.text === "fail" ? 500 : delivery.body.text === "reject" ? 422 : 200,
        }),
    );
    const env = objectsUse(testEnv(channelConfig(), { WEBHOOK_SECRET: SECRET }));
    const [ok, retry, dead] = ["fine", "fail", "reject"].map((text) =>
      queuedMessage({ conversationId: freshConversation(), text }),
    );
    if (ok === undefined || retry === undefined || dead === undefined) throw new Error("three messages");
    const [okStub, retryStub, deadStub] = [ok, retry, dead].map((queued) =>
      conversation(queued.message.conversationId),
    );
    const messages = [ok, retry, dead].map((queued) => delivered(queued));

    const result = await handOver(env, messages);
    expect([...result.explicitAcks].sort()).toEqual(messages.map((message) => message.id).sort());
    await eventually(() => expect(deliveries).toHaveLength(3));
    await eventually(() => expect(env.DEAD_LETTERS.sent).toHaveLength(1));
    expect(await waiting(okStub as DurableObjectStub<never>)).toBe(0);
    expect(await waiting(deadStub as DurableObjectStub<never>)).toBe(0);
    expect(await waiting(retryStub as DurableObjectStub<never>)).toBe(1);
  });

  it("keeps one alarm for the next retry and the expiry: the retry while a job waits, the expiry after", async () => {
    captureLogs();
    const { deliveries } = fakeReceiver((_delivery, index) =>
      index === 0
        ? new Response(null, { status: 503, headers: { "retry-after": "1" } })
        : new Response(null, { status: 200 }),
    );
    const env = objectsUse(testEnv(channelConfig({ delivery: { initial_delay_ms: 20 } }), { WEBHOOK_SECRET: SECRET }));
    const queued = queuedMessage({ conversationId: freshConversation() });
    const stub = conversation(queued.message.conversationId);
    await handOver(env, [delivered(queued)]);

    await eventually(() => expect(deliveries).toHaveLength(1));
    await eventually(async () => expect(await alarmOf(stub)).toBeLessThan(Date.now() + 2_000));
    await eventually(() => expect(deliveries).toHaveLength(2), 5_000);
    await eventually(async () =>
      expect(await alarmOf(stub)).toBeGreaterThan(Date.now() + CONVERSATION_TTL_MS - 3_600_000),
    );
  });

  it("forgets a conversation idle for the TTL, but never a waiting job", async () => {
    captureLogs();
    const conversationId = freshConversation();
    const stub = conversation(conversationId);
    // Within the memory's retention: only the conversation's expiry may take it.
    await stub.append([{ role: "user", text: "old", at: Date.now() }]);
    await runInDurableObject(stub, (_instance, state) => {
      state.storage.sql.exec("INSERT INTO counters (name, value) VALUES ('sequence', 3)");
    });
    const idle = Date.now() - CONVERSATION_TTL_MS - 1;
    const expire = () =>
      runInDurableObject(stub, async (instance, state) => {
        state.storage.sql.exec("UPDATE counters SET value = ? WHERE name = 'touched_at'", idle);
        await instance.alarm();
      });

    // A job waiting (here, not due for a minute, so its hand-over does not run it) keeps everything.
    await stub.enqueue([queuedMessage({ conversationId, channel: "nowhere", receivedAt: Date.now() + 60_000 })]);
    await expire();
    expect(await stub.history(10)).toHaveLength(1);
    await runInDurableObject(stub, (_instance, state) => {
      state.storage.sql.exec("DELETE FROM lane");
    });

    await expire();
    expect(await stub.history(10)).toEqual([]);
    const numbers = await runInDurableObject(stub, (_instance, state) =>
      state.storage.sql.exec("SELECT COUNT(*) AS n FROM counters WHERE name = 'sequence'").one(),
    );
    expect(numbers.n).toBe(0);
  });

  it("moves the dead letters version 0.1.0 kept in the conversation to the dead-letter store", async () => {
    captureLogs();
    const conversationId = freshConversation();
    const stub = conversation(conversationId);
    const queued = queuedMessage({ conversationId, text: "kept by 0.1.0" });
    const letter = {
      job: { message: queued, delivered: 0, attempts: 2 },
      error: { code: "brain_failed", message: "the brain answered 500", retryable: true, status: 500 },
      attempts: 2,
      diedAt: Date.now() - 1_000,
    };
    await runInDurableObject(stub, async (instance, state) => {
      state.storage.sql.exec(
        "INSERT INTO dead_letters (id, letter, died_at) VALUES (?, ?, ?)",
        queued.id,
        JSON.stringify(letter),
        letter.diedAt,
      );
      await instance.alarm();
    });

    const store = poolEnv.DEAD_LETTER_STORE.get(poolEnv.DEAD_LETTER_STORE.idFromName(DEAD_LETTER_STORE_NAME));
    const kept = await store.one(queued.id);
    expect(kept === null ? undefined : JSON.parse(kept.letter)).toEqual(letter);
    const left = await runInDurableObject(
      stub,
      (_instance, state) => state.storage.sql.exec<{ n: number }>("SELECT COUNT(*) AS n FROM dead_letters").one().n,
    );
    expect(left).toBe(0);
    await store.remove(queued.id);
  });
});
