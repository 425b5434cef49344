import { env as poolEnv } from "cloudflare:workers";
import { afterEach, describe, expect, it, vi } from "vitest";
import { jobKey } from "../../src/core/lifecycle/pending-job-store.js";
import type { ConversationObject } from "../../src/workers/conversation/conversation-object.js";
import { createDurablePendingJobStore } from "../../src/workers/conversation/durable-pending-job-store.js";
import {
  conversation,
  eventually,
  forgetConversations,
  handOver,
  objectsUse,
  waiting,
} from "./support/conversations.js";
import { captureLogs, fakeReceiver } from "./support/fake-receiver.js";
import { delivered, queuedMessage } from "./support/queue-messages.js";
import { channelConfig, freshConversation, OUTBOUND_URL, SECRET } from "./support/test-config.js";
import { testEnv } from "./support/test-env.js";

afterEach(async () => {
  await forgetConversations();
  vi.restoreAllMocks();
});

/**
 * The pool's namespace, with the calls made on its stubs counted by method name: the parts
 * the inbound consumer uses (`idFromName`, `get`).
 */
function countingNamespace(calls: string[]): DurableObjectNamespace<ConversationObject> {
  const namespace = poolEnv.CONVERSATIONS;
  const counting = {
    idFromName: (name: string) => namespace.idFromName(name),
    get: (id: DurableObjectId) => {
      const stub = namespace.get(id);
      return {
        enqueue: (...args: Parameters<typeof stub.enqueue>) => {
          calls.push("enqueue");
          return stub.enqueue(...args);
        },
      };
    },
  };
  return counting as unknown as DurableObjectNamespace<ConversationObject>;
}

describe("the inbound queue consumer", () => {
  it("hands a message to its conversation's object, acks it once stored, and the object answers it", async () => {
    captureLogs();
    const { deliveries } = fakeReceiver();
    const env = objectsUse(testEnv(channelConfig(), { WEBHOOK_SECRET: SECRET }));
    const queued = queuedMessage({ conversationId: freshConversation(), text: "hi there" });
    const message = delivered(queued);
    const stub = conversation(queued.message.conversationId);

    const result = await handOver(env, [message]);
    expect(result.explicitAcks).toEqual([message.id]);
    expect(result.retryMessages).toEqual([]);

    await eventually(() => expect(deliveries).toHaveLength(1));
    const [reply] = deliveries;
    expect(reply?.url).toBe(OUTBOUND_URL);
    expect(reply?.headers["content-type"]).toBe("application/json");
    expect(reply?.headers["webhook-id"]).toBe(reply?.body.message_id);
    expect(reply?.body).toMatchObject({
      in_reply_to: queued.id,
      conversation_id: queued.message.conversationId,
      recipient_id: "u1",
      text: "hi there",
      brain: "echo",
      sequence: 1,
    });
    await eventually(async () => expect(await waiting(stub)).toBe(0));
  });

  it("hands a conversation's messages of a batch over in one call, and they are answered in order", async () => {
    captureLogs();
    const { deliveries } = fakeReceiver();
    const calls: string[] = [];
    const env = objectsUse({
      ...testEnv(channelConfig(), { WEBHOOK_SECRET: SECRET }),
      CONVERSATIONS: countingNamespace(calls),
    });
    const one = freshConversation();
    const two = freshConversation();
    conversation(one);
    conversation(two);
    const messages = [
      delivered(queuedMessage({ conversationId: one, text: "one-1" })),
      delivered(queuedMessage({ conversationId: two, text: "two-1" })),
      delivered(queuedMessage({ conversationId: one, text: "one-2" })),
      delivered(queuedMessage({ conversationId: one, text: "one-3" })),
    ];

    const result = await handOver(env, messages);
    expect([...result.explicitAcks].sort()).toEqual(messages.map((message) => message.id).sort());
    expect(calls).toEqual(["enqueue", "enqueue"]);

    await eventually(() => expect(deliveries).toHaveLength(4));
    const ofOne = deliveries.filter((delivery) => delivery.body.conversation_id === one);
    expect(ofOne.map((delivery) => [delivery.body.text, delivery.body.sequence])).toEqual([
      ["one-1", 1],
      ["one-2", 2],
      ["one-3", 3],
    ]);
  });

  it("acks a message delivered again without answering it twice", async () => {
    captureLogs();
    const { deliveries } = fakeReceiver();
    const env = objectsUse(testEnv(channelConfig(), { WEBHOOK_SECRET: SECRET }));
    const queued = queuedMessage({ conversationId: freshConversation() });
    conversation(queued.message.conversationId);
    const id = crypto.randomUUID();

    // Once while it waits in the lane, once after it was answered.
    expect((await handOver(env, [delivered(queued, 1, id), delivered(queued, 1, id)])).explicitAcks).toHaveLength(2);
    await eventually(() => expect(deliveries).toHaveLength(1));
    expect((await handOver(env, [delivered(queued, 2, id)])).explicitAcks).toEqual([id]);
    // A window for a second answer that should not come.
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(deliveries).toHaveLength(1);
  });

  it("answers a message parked in its conversation's object (too large for a queue message), then deletes it", async () => {
    captureLogs();
    const { deliveries } = fakeReceiver();
    const env = objectsUse(testEnv(channelConfig(), { WEBHOOK_SECRET: SECRET }));
    const queued = queuedMessage({ conversationId: freshConversation(), text: "y".repeat(200_000) });
    conversation(queued.message.conversationId);
    const jobs = createDurablePendingJobStore(poolEnv.CONVERSATIONS, poolEnv.DEAD_LETTER_STORE);
    const job = { message: queued, delivered: 0, attempts: 0 };
    await jobs.add(job);
    const key = jobKey(job);
    const message = delivered({ stored: key });

    expect((await handOver(env, [message])).explicitAcks).toEqual([message.id]);
    await eventually(() => expect(deliveries).toHaveLength(1));
    expect(deliveries[0]?.body.text).toBe(queued.message.text);
    expect(await jobs.get(key)).toBeUndefined();

    // A duplicate of the reference is acked without a reply.
    const duplicate = delivered({ stored: key });
    expect((await handOver(env, [duplicate])).explicitAcks).toEqual([duplicate.id]);
    // A window for a second reply that should not come.
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(deliveries).toHaveLength(1);
  });

  it("acks a reference to a parked message that is gone, with a warning", async () => {
    const { lines } = captureLogs();
    const env = objectsUse(testEnv(channelConfig(), { WEBHOOK_SECRET: SECRET }));
    const conversationId = freshConversation();
    conversation(conversationId);
    const message = delivered({ stored: { id: crypto.randomUUID(), channel: "webhook", conversationId } });
    expect((await handOver(env, [message])).explicitAcks).toEqual([message.id]);
    expect(lines.some((line) => line.level === "warn" && String(line.msg).includes("already answered"))).toBe(true);
  });

  it("leaves messages on the queue, with the backoff, when their conversation's object cannot be reached", async () => {
    const { lines } = captureLogs();
    vi.spyOn(Math, "random").mockReturnValue(0.999_999);
    const unreachable = {
      idFromName: (name: string) => poolEnv.CONVERSATIONS.idFromName(name),
      get: () => ({ enqueue: () => Promise.reject(new Error("object unavailable")) }),
    } as unknown as DurableObjectNamespace<ConversationObject>;
    const env = { ...testEnv(channelConfig(), { WEBHOOK_SECRET: SECRET }), CONVERSATIONS: unreachable };
    const message = delivered(queuedMessage({ conversationId: freshConversation() }), 3);
    const result = await handOver(env, [message]);
    expect(result.explicitAcks).toEqual([]);
    // The third delivery: a draw below 4 s, rounded up to the queue's whole seconds.
    expect(result.retryMessages).toEqual([{ msgId: message.id, delaySeconds: 4 }]);
    expect(lines.some((line) => line.level === "warn" && line.error === "object unavailable")).toBe(true);
  });

  it("sends an unreadable body to the dead-letter queue", async () => {
    captureLogs();
    const env = testEnv(channelConfig(), { WEBHOOK_SECRET: SECRET });
    const message = delivered({ hello: "world" });
    const result = await handOver(env, [message]);
    expect(result.explicitAcks).toEqual([message.id]);
    expect(env.DEAD_LETTERS.sent).toEqual([{ hello: "world" }]);
  });

  it("leaves messages on the queue while the configuration is unusable", async () => {
    captureLogs();
    const env = testEnv(channelConfig(), { WEBHOOK_SECRET: "" });
    const message = delivered(queuedMessage({ conversationId: freshConversation() }));
    const result = await handOver(env, [message]);
    expect(result.explicitAcks).toEqual([]);
    expect(result.retryMessages).toEqual([{ msgId: message.id, delaySeconds: 60 }]);
  });
});
