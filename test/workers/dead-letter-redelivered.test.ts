/**
 * The dead-letter queue delivers at least once: a copy of a message the platform moved there
 * after the inbound queue's `max_retries` can come again (an invocation whose ack was lost). The
 * store takes a copy of a letter it already has, or replayed or deleted within the day, once
 * (docs/workers.md, Dead letters); a copy of a moved message must be recognised as the same
 * letter, not kept again as a later death of its message, which would list a letter the operator
 * deleted (or replayed: a second replay would answer the message twice). Inside workerd.
 */
import { createExecutionContext, createMessageBatch, getQueueResult } from "cloudflare:test";
import { env as poolEnv } from "cloudflare:workers";
import { afterEach, expect, it, vi } from "vitest";
import { createDurableDeadLetterStore } from "../../src/workers/dead-letters/durable-dead-letter-store.js";
import worker from "../../src/workers/index.js";
import { conversation, eventually, forgetConversations, handOver, objectsUse } from "./support/conversations.js";
import { captureLogs, fakeReceiver } from "./support/fake-receiver.js";
import { delivered, queuedMessage } from "./support/queue-messages.js";
import { channelConfig, freshConversation, SECRET } from "./support/test-config.js";
import { type TestEnv, testEnv } from "./support/test-env.js";

afterEach(async () => {
  await forgetConversations();
  vi.restoreAllMocks();
});

async function deadLetters(env: TestEnv, message: ServiceBindingQueueMessage<unknown>): Promise<string[]> {
  const batch = createMessageBatch("webhook-channel-dead-letters", [message]);
  const ctx = createExecutionContext();
  await worker.queue(batch, env);
  return (await getQueueResult(batch, ctx)).explicitAcks;
}

it("does not list again a moved message its operator deleted when the dead-letter queue delivers it again", async () => {
  captureLogs();
  const env = testEnv(channelConfig(), { WEBHOOK_SECRET: SECRET });
  const store = createDurableDeadLetterStore(poolEnv.DEAD_LETTER_STORE);
  // Moved by the platform after max_retries: the body is the whole message.
  const queued = queuedMessage({ conversationId: freshConversation(), text: "moved once" });
  conversation(queued.message.conversationId);
  const moved = { id: crypto.randomUUID(), timestamp: new Date(), body: queued };

  expect(await deadLetters(env, { ...moved, attempts: 1 })).toEqual([moved.id]);
  expect(await store.one(queued.id)).toBeDefined();
  // The operator deletes it.
  expect(await store.remove(queued.id)).toBe(true);

  // The same queue message again, a moment later (its first ack was lost).
  const deletedAt = Date.now();
  await vi.waitFor(() => expect(Date.now()).toBeGreaterThan(deletedAt));
  expect(await deadLetters(env, { ...moved, attempts: 2 })).toEqual([moved.id]);
  expect(await store.one(queued.id)).toBeUndefined();
});

it("logs a conversation's dead letter too large for a queue message once, kept, when the queue delivers it again", async () => {
  const { lines } = captureLogs();
  fakeReceiver(() => new Response(null, { status: 400 }));
  const env = objectsUse(testEnv(channelConfig(), { WEBHOOK_SECRET: SECRET }));
  const queued = queuedMessage({ conversationId: freshConversation(), text: "z".repeat(150_000) });
  conversation(queued.message.conversationId);
  await handOver(env, [delivered(queued)]);
  await eventually(() => expect(env.DEAD_LETTERS.sent).toHaveLength(1));
  const letter = { id: crypto.randomUUID(), timestamp: new Date(), body: env.DEAD_LETTERS.sent[0] };

  await deadLetters(env, { ...letter, attempts: 1 });
  // Its first ack was lost: the same queue message again.
  await deadLetters(env, { ...letter, attempts: 2 });

  expect(await createDurableDeadLetterStore(poolEnv.DEAD_LETTER_STORE).one(queued.id)).toBeDefined();
  const about = lines.filter((line) => line.message_id === queued.id);
  // One error line, where it died (in its conversation), and one `dead letter kept`: no false "will not be answered".
  expect(about.filter((line) => line.level === "error").map((line) => line.msg)).toEqual([
    expect.not.stringMatching(/will not be answered/),
  ]);
  expect(about.filter((line) => line.msg === "dead letter kept")).toHaveLength(1);
});
