import { createExecutionContext, createMessageBatch, getQueueResult } from "cloudflare:test";
import { env as poolEnv } from "cloudflare:workers";
import { afterEach, describe, expect, it, vi } from "vitest";
import { jobKey } from "../../src/core/lifecycle/pending-job-store.js";
import { createDurablePendingJobStore } from "../../src/workers/conversation/durable-pending-job-store.js";
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

async function consume(env: TestEnv, queue: string, messages: ServiceBindingQueueMessage<unknown>[]) {
  const batch = createMessageBatch(queue, messages);
  const ctx = createExecutionContext();
  await worker.queue(batch, env);
  return await getQueueResult(batch, ctx);
}

/** Hands a message to its conversation's object and waits until the object dead-lettered it. */
async function inbound(env: TestEnv, messages: ServiceBindingQueueMessage<unknown>[]): Promise<void> {
  const before = env.DEAD_LETTERS.sent.length;
  await handOver(env, messages);
  await eventually(() => expect(env.DEAD_LETTERS.sent.length).toBeGreaterThan(before));
}
const deadLetters = (env: TestEnv, messages: ServiceBindingQueueMessage<unknown>[]) =>
  consume(env, "webhook-channel-dead-letters", messages);

/** The dead-letter consumer's line: `dead letter kept` for a letter a conversation's object reported, else the error line. */
const deadLetterLines = (lines: Record<string, unknown>[]) =>
  lines.filter(
    (line) => line.msg === "dead letter kept" || line.msg === "dead letter: this message will not be answered",
  );

describe("the dead-letter path", () => {
  it("logs a rejected reply's dead letter once at error level where it died, keeps it with its reason and replies, and acks it", async () => {
    const { lines } = captureLogs();
    const { deliveries } = fakeReceiver(() => new Response("bad", { status: 422 }));
    const env = objectsUse(testEnv(channelConfig(), { WEBHOOK_SECRET: SECRET }));
    const queued = queuedMessage({ conversationId: freshConversation(), text: "a private message" });
    conversation(queued.message.conversationId);

    await inbound(env, [delivered(queued)]);
    expect(env.DEAD_LETTERS.sent).toHaveLength(1);
    const letter = delivered(env.DEAD_LETTERS.sent[0]);
    const result = await deadLetters(env, [letter]);

    expect(result.explicitAcks).toEqual([letter.id]);
    // One error line, the conversation object's, the same as on Node; the consumer's is info.
    const errors = lines.filter((entry) => entry.level === "error" && String(entry.msg).startsWith("dead letter"));
    expect(errors).toEqual([expect.objectContaining({ msg: "dead letter: outbound_url answered 422", id: queued.id })]);
    const [line] = deadLetterLines(lines);
    expect(line).toMatchObject({
      level: "info",
      msg: "dead letter kept",
      dead_letter_id: letter.id,
      message_id: queued.id,
      channel: "webhook",
      conversation_id: queued.message.conversationId,
      sender_id: "u1",
      code: "delivery_failed",
      retryable: false,
      status: 422,
      attempts: 1,
      replies_delivered: 0,
      text_chars: "a private message".length,
      replies: [{ id: deliveries[0]?.headers["webhook-id"], sequence: 1 }],
    });
    // Message text is logged only at debug.
    expect(JSON.stringify(lines)).not.toContain("a private message");
  });

  it("logs the dead letter in full (message and reply bodies) when log_level is debug", async () => {
    const { lines } = captureLogs();
    fakeReceiver(() => new Response(null, { status: 400 }));
    const env = objectsUse(testEnv(channelConfig({ top: { log_level: "debug" } }), { WEBHOOK_SECRET: SECRET }));
    const queued = queuedMessage({ conversationId: freshConversation(), text: "keep me" });
    conversation(queued.message.conversationId);
    await inbound(env, [delivered(queued)]);
    await deadLetters(env, [delivered(env.DEAD_LETTERS.sent[0])]);

    const [line] = deadLetterLines(lines);
    expect(line?.message).toEqual(queued.message);
    const replies = line?.replies as { body: string }[];
    expect(JSON.parse(replies[0]?.body ?? "{}")).toMatchObject({ text: "keep me", in_reply_to: queued.id });
  });

  it("logs a message the platform moved after max_retries (never handed over), and deletes what was parked", async () => {
    const { lines } = captureLogs();
    const env = testEnv(channelConfig(), { WEBHOOK_SECRET: SECRET });
    const queued = queuedMessage({ conversationId: freshConversation(), text: "w".repeat(120_000) });
    conversation(queued.message.conversationId);
    // Parked by the endpoint, too large for a queue message; its object was never reachable.
    const jobs = createDurablePendingJobStore(poolEnv.CONVERSATIONS, poolEnv.DEAD_LETTER_STORE);
    const job = { message: queued, delivered: 0, attempts: 0 };
    await jobs.add(job);
    const moved = delivered({ stored: jobKey(job) });
    const result = await deadLetters(env, [moved]);

    expect(result.explicitAcks).toEqual([moved.id]);
    const [line] = deadLetterLines(lines);
    expect(line).toMatchObject({
      message_id: queued.id,
      code: "max_retries",
      replies_delivered: 0,
      text_chars: 120_000,
    });
    expect(await jobs.get(jobKey(job))).toBeUndefined();
  });

  it("keeps a dead letter too large for a queue message in the Durable Object until it is logged", async () => {
    const { lines } = captureLogs();
    fakeReceiver(() => new Response(null, { status: 400 }));
    const env = objectsUse(testEnv(channelConfig(), { WEBHOOK_SECRET: SECRET }));
    const queued = queuedMessage({ conversationId: freshConversation(), text: "z".repeat(150_000) });
    conversation(queued.message.conversationId);
    await inbound(env, [delivered(queued)]);

    const body = env.DEAD_LETTERS.sent[0] as { deadLetter: { job: unknown } };
    expect(body.deadLetter.job).toEqual({
      stored: { id: queued.id, channel: "webhook", conversationId: queued.message.conversationId },
    });
    await deadLetters(env, [delivered(body)]);
    expect(deadLetterLines(lines)[0]).toMatchObject({ message_id: queued.id, text_chars: 150_000 });
    expect(
      await createDurablePendingJobStore(poolEnv.CONVERSATIONS, poolEnv.DEAD_LETTER_STORE).get(
        (body.deadLetter.job as { stored: { id: string; channel: string; conversationId: string } }).stored,
      ),
    ).toBeUndefined();
  });

  it("logs and acks an unreadable dead letter", async () => {
    const { lines } = captureLogs();
    const env = testEnv(channelConfig(), { WEBHOOK_SECRET: SECRET });
    const letter = delivered("not a message");
    const result = await deadLetters(env, [letter]);
    expect(result.explicitAcks).toEqual([letter.id]);
    expect(lines.some((line) => line.msg === "dead letter: unreadable body" && line.dead_letter_id === letter.id)).toBe(
      true,
    );
  });

  it("logs dead letters even while the configuration is unusable", async () => {
    const { lines } = captureLogs();
    const env = testEnv(channelConfig(), { WEBHOOK_SECRET: "" });
    const queued = queuedMessage({ conversationId: freshConversation() });
    const result = await deadLetters(env, [delivered(queued)]);
    expect(result.explicitAcks).toHaveLength(1);
    expect(deadLetterLines(lines)).toHaveLength(1);
  });
});
