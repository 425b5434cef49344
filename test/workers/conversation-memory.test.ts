import { abortAllDurableObjects, runInDurableObject } from "cloudflare:test";
import { env as poolEnv } from "cloudflare:workers";
import { afterEach, describe, expect, it, vi } from "vitest";
import { type ConversationTurn, conversationKey } from "../../src/core/conversation/conversation-store.js";
import { newJob } from "../../src/core/lifecycle/job.js";
import { MAX_TURN_CHARS, MAX_TURNS } from "../../src/workers/conversation/conversation-memory.js";
import { createDurableConversationStore } from "../../src/workers/conversation/durable-conversation-store.js";
import type { DurableLaneStore } from "../../src/workers/conversation/durable-lane-store.js";
import { readQueuedMessage } from "../../src/workers/queue-body.js";
import { conversation, eventually, forgetConversations, handOver, objectsUse } from "./support/conversations.js";
import { captureLogs, type Delivery, fakeReceiver } from "./support/fake-receiver.js";
import { delivered, queuedMessage } from "./support/queue-messages.js";
import { channelConfig, freshConversation, OUTBOUND_URL, SECRET } from "./support/test-config.js";
import { type TestEnv, testEnv } from "./support/test-env.js";

const BOT_URL = "https://bot.example/chat";

afterEach(async () => {
  await forgetConversations();
  vi.restoreAllMocks();
});

/** Hands messages to their conversations' objects (as the test's environment) and acks them. */
async function inbound(env: TestEnv, messages: ServiceBindingQueueMessage<unknown>[]) {
  for (const message of messages) {
    const queued = readQueuedMessage("body" in message ? message.body : undefined);
    if (queued !== undefined) conversation(queued.message.conversationId);
  }
  return await handOver(objectsUse(env), messages);
}

/** A bot (an `http` brain) that answers with the texts of the history it was sent. */
function botAndReceiver(): { replies: Delivery[]; botCalls: Delivery[] } {
  const replies: Delivery[] = [];
  const botCalls: Delivery[] = [];
  fakeReceiver((delivery) => {
    if (delivery.url === BOT_URL) {
      botCalls.push(delivery);
      const history = delivery.body.history as { role: string; text?: string }[];
      const seen = history.map((turn) => `${turn.role}:${turn.text ?? ""}`).join("|");
      return Response.json({ text: `seen[${seen}]` });
    }
    expect(delivery.url).toBe(OUTBOUND_URL);
    replies.push(delivery);
    return new Response(null, { status: 200 });
  });
  return { replies, botCalls };
}

const botOptions = {
  top: {
    brains: { bot: { type: "http", url: BOT_URL, max_history: 10 } },
    routes: [{ channel: "webhook", brain: "bot" }],
  },
};
const botConfig = channelConfig(botOptions);

describe("conversation memory in the Durable Object", () => {
  it("carries the first message and its reply into the second message of the conversation", async () => {
    captureLogs();
    const { replies } = botAndReceiver();
    const conversationId = freshConversation();

    const first = await inbound(testEnv(botConfig, { WEBHOOK_SECRET: SECRET }), [
      delivered(queuedMessage({ conversationId, text: "my name is Ada" })),
    ]);
    expect(first.explicitAcks).toHaveLength(1);
    await eventually(() => expect(replies).toHaveLength(1));
    // Another isolate's worth of state: fresh runtime, Durable Object instances reset.
    await abortAllDurableObjects();
    const second = await inbound(testEnv(botConfig, { WEBHOOK_SECRET: SECRET }), [
      delivered(queuedMessage({ conversationId, text: "what is my name?" })),
    ]);
    expect(second.explicitAcks).toHaveLength(1);
    await eventually(() => expect(replies).toHaveLength(2));

    expect(replies.map((reply) => [reply.body.text, reply.body.sequence])).toEqual([
      ["seen[]", 1],
      ["seen[user:my name is Ada|assistant:seen[]]", 2],
    ]);
  });

  it("keeps conversations apart", async () => {
    captureLogs();
    const { replies } = botAndReceiver();
    const env = testEnv(botConfig, { WEBHOOK_SECRET: SECRET });
    const one = freshConversation();
    const two = freshConversation();
    await inbound(env, [delivered(queuedMessage({ conversationId: one, text: "secret of one" }))]);
    await eventually(() => expect(replies).toHaveLength(1));
    await inbound(env, [delivered(queuedMessage({ conversationId: two, text: "hello" }))]);
    await eventually(() => expect(replies).toHaveLength(2));
    expect(replies[1]?.body).toMatchObject({ conversation_id: two, text: "seen[]", sequence: 1 });
  });

  it("does not ask the bot again, nor store the turns twice, when only the delivery is retried", async () => {
    captureLogs();
    const replies: Delivery[] = [];
    let botCalls = 0;
    fakeReceiver((delivery) => {
      if (delivery.url === BOT_URL) {
        botCalls += 1;
        return Response.json({ text: `answer ${botCalls}` });
      }
      replies.push(delivery);
      return new Response(null, { status: replies.length === 1 ? 502 : 200 });
    });
    const env = testEnv(channelConfig({ ...botOptions, delivery: { initial_delay_ms: 20 } }), {
      WEBHOOK_SECRET: SECRET,
    });
    const conversationId = freshConversation();
    const queued = queuedMessage({ conversationId, text: "hi" });
    expect((await inbound(env, [delivered(queued)])).explicitAcks).toHaveLength(1);
    await eventually(() => expect(replies).toHaveLength(2));

    expect(botCalls).toBe(1);
    expect(replies.map((reply) => reply.body.text)).toEqual(["answer 1", "answer 1"]);
    const history = await createDurableConversationStore(poolEnv.CONVERSATIONS).history(
      conversationKey("webhook", conversationId),
      MAX_TURNS,
    );
    expect(history.map((turn) => [turn.role, turn.text])).toEqual([
      ["user", "hi"],
      ["assistant", "answer 1"],
    ]);
  });

  it("survives Durable Object restarts and keeps only the last 100 turns", async () => {
    const store = createDurableConversationStore(poolEnv.CONVERSATIONS);
    const key = conversationKey("webhook", freshConversation());
    // Timed now: a turn older than the conversation memory's retention is not read back.
    const now = Date.now();
    for (let batch = 0; batch < 13; batch += 1) {
      await store.append(
        key,
        Array.from({ length: 10 }, (_, index) => ({
          role: "user" as const,
          text: `t${batch * 10 + index}`,
          at: now + batch,
        })),
      );
    }
    await abortAllDurableObjects();
    const history = await createDurableConversationStore(poolEnv.CONVERSATIONS).history(key, 1000);
    expect(history).toHaveLength(MAX_TURNS);
    expect(history[0]?.text).toBe("t30");
    expect(history.at(-1)?.text).toBe("t129");
    expect((await store.history(key, 3)).map((turn) => turn.text)).toEqual(["t127", "t128", "t129"]);
    expect(await store.history(key, 0)).toEqual([]);
  });

  it("keeps media and roles of turns", async () => {
    const store = createDurableConversationStore(poolEnv.CONVERSATIONS);
    const key = conversationKey("webhook", freshConversation());
    const at = Date.now();
    const turns: ConversationTurn[] = [
      { role: "user", mediaUrl: "https://example.com/a.png", mediaType: "image/png", at },
      { role: "assistant", text: "a cat", at: at + 1 },
    ];
    await store.append(key, turns);
    expect(await store.history(key, 10)).toEqual(turns);
  });

  it("keeps a turn of megabytes cut to what one row holds, never between a surrogate pair's halves", async () => {
    const store = createDurableConversationStore(poolEnv.CONVERSATIONS);
    const key = conversationKey("webhook", freshConversation());
    const at = Date.now();
    // Three million characters of two UTF-8 bytes each: far past the 2 MB a row holds.
    const long = `a${"😀".repeat(1_500_000)}`;
    await store.append(key, [{ role: "assistant", text: long, at }]);
    const [turn] = await store.history(key, 10);
    expect(turn?.text).toBe(long.slice(0, MAX_TURN_CHARS - 1));
  });

  it("keeps a conversation's last reply number across restarts, from the replies its lane saved", async () => {
    const conversationId = freshConversation();
    const key = conversationKey("webhook", conversationId);
    const stub = () => poolEnv.CONVERSATIONS.get(poolEnv.CONVERSATIONS.idFromName(key));
    const lanes = (instance: unknown) => (instance as { readonly store: DurableLaneStore }).store;
    const job = newJob(queuedMessage({ conversationId }));
    await runInDurableObject(stub(), async (instance) => {
      const store = lanes(instance);
      const ticket = { key, epoch: store.epoch };
      expect(await store.lastSequence(ticket)).toBe(0);
      await store.add(job);
      const replies = [1, 2].map((sequence) => ({ id: crypto.randomUUID(), sequence, body: "{}" }));
      await store.save(ticket, { ...job, replies }, { turns: [] });
    });
    await abortAllDurableObjects();
    const last = await runInDurableObject(stub(), (instance) => {
      const store = lanes(instance);
      return store.lastSequence({ key, epoch: store.epoch });
    });
    expect(last).toBe(2);
  });
});

describe("a workers-ai brain", () => {
  it("answers through the AI binding, with the conversation's history", async () => {
    captureLogs();
    const { deliveries } = fakeReceiver();
    const calls: unknown[] = [];
    const AI = {
      run(model: string, input: unknown) {
        calls.push({ model, input });
        return Promise.resolve({ response: `reply ${calls.length}` });
      },
    };
    const config = channelConfig({
      top: {
        brains: { ai: { type: "workers-ai", model: "@cf/meta/llama-3.1-8b-instruct", system_prompt: "Be brief." } },
        routes: [{ channel: "webhook", brain: "ai" }],
      },
    });
    const conversationId = freshConversation();
    await inbound(testEnv(config, { WEBHOOK_SECRET: SECRET, AI }), [
      delivered(queuedMessage({ conversationId, text: "first" })),
    ]);
    await eventually(() => expect(deliveries).toHaveLength(1));
    await inbound(testEnv(config, { WEBHOOK_SECRET: SECRET, AI }), [
      delivered(queuedMessage({ conversationId, text: "second" })),
    ]);
    await eventually(() => expect(deliveries).toHaveLength(2));
    expect(deliveries.map((delivery) => delivery.body.text)).toEqual(["reply 1", "reply 2"]);
    expect(calls[1]).toEqual({
      model: "@cf/meta/llama-3.1-8b-instruct",
      input: {
        messages: [
          { role: "system", content: "Be brief." },
          { role: "user", content: "first" },
          { role: "assistant", content: "reply 1" },
          { role: "user", content: "second" },
        ],
      },
    });
  });

  it("leaves messages waiting, and says why, when wrangler.toml has no AI binding", async () => {
    const { lines } = captureLogs();
    const config = channelConfig({
      top: {
        brains: { ai: { type: "workers-ai", model: "@cf/meta/llama-3.1-8b-instruct" } },
        routes: [{ channel: "webhook", brain: "ai" }],
      },
    });
    const result = await inbound(testEnv(config, { WEBHOOK_SECRET: SECRET }), [
      delivered(queuedMessage({ conversationId: freshConversation() })),
    ]);
    expect(result.explicitAcks).toEqual([]);
    expect(lines.some((line) => line.level === "error" && String(line.msg).includes("AI binding"))).toBe(true);
  });
});
