import { createExecutionContext, createMessageBatch, getQueueResult } from "cloudflare:test";
import { env as poolEnv } from "cloudflare:workers";
import { afterEach, describe, expect, it, vi } from "vitest";
import { jobKey } from "../../src/core/delivery/pending-job-store.js";
import { createDurablePendingJobStore } from "../../src/workers/durable-pending-job-store.js";
import worker from "../../src/workers/index.js";
import { readDeadLetterBody } from "../../src/workers/queue-body.js";
import { createFakeQueue } from "./support/fake-queue.js";
import { captureLogs, fakeReceiver } from "./support/fake-receiver.js";
import { delivered, queuedMessage } from "./support/queue-messages.js";
import { channelConfig, freshConversation, OUTBOUND_URL, SECRET } from "./support/test-config.js";
import { type TestEnv, testEnv } from "./support/test-env.js";

const INBOUND = "webhook-channel-inbound";

afterEach(() => {
  vi.restoreAllMocks();
});

/**
 * Runs the Worker's queue handler on a batch of the inbound queue. getQueueResult() of this
 * pool version records that retry() was called but not its delay, so each message's
 * retry() is wrapped to record `delaySeconds` too.
 */
async function consume(env: TestEnv, messages: ServiceBindingQueueMessage<unknown>[]) {
  const batch = createMessageBatch(INBOUND, messages);
  const delays = new Map<string, number | undefined>();
  for (const message of batch.messages) {
    const retry = message.retry.bind(message);
    vi.spyOn(message, "retry").mockImplementation((options?: QueueRetryOptions) => {
      delays.set(message.id, options?.delaySeconds);
      retry(options);
    });
  }
  const ctx = createExecutionContext();
  await worker.queue(batch, env);
  const result = await getQueueResult(batch, ctx);
  return {
    ...result,
    retryMessages: result.retryMessages.map(({ msgId }) => ({ msgId, delaySeconds: delays.get(msgId) })),
  };
}

describe("the inbound queue consumer", () => {
  it("delivers the reply and acks the message", async () => {
    captureLogs();
    const { deliveries } = fakeReceiver();
    const env = testEnv(channelConfig(), { WEBHOOK_SECRET: SECRET });
    const queued = queuedMessage({ conversationId: freshConversation(), text: "hi there" });
    const message = delivered(queued);

    const result = await consume(env, [message]);

    expect(result.explicitAcks).toEqual([message.id]);
    expect(result.retryMessages).toEqual([]);
    expect(result.ackAll).toBe(false);
    expect(deliveries).toHaveLength(1);
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
  });

  it("retries a failed delivery with the backoff, honouring Retry-After, then resumes it with the same reply", async () => {
    captureLogs();
    const { deliveries } = fakeReceiver((_delivery, index) =>
      index === 0
        ? new Response(null, { status: 503, headers: { "retry-after": "7" } })
        : new Response(null, { status: 204 }),
    );
    const env = testEnv(channelConfig(), { WEBHOOK_SECRET: SECRET });
    const queued = queuedMessage({ conversationId: freshConversation() });
    const first = delivered(queued, 1);

    const failed = await consume(env, [first]);
    expect(failed.explicitAcks).toEqual([]);
    expect(failed.retryMessages).toHaveLength(1);
    expect(failed.retryMessages[0]?.msgId).toBe(first.id);
    expect(failed.retryMessages[0]?.delaySeconds).toBeGreaterThanOrEqual(7);
    expect(failed.retryMessages[0]?.delaySeconds).toBeLessThanOrEqual(60);

    // The platform redelivers the same body; the saved job keeps the reply the brain gave.
    const again = delivered(queued, 2, first.id);
    const succeeded = await consume(env, [again]);
    expect(succeeded.explicitAcks).toEqual([first.id]);
    expect(deliveries).toHaveLength(2);
    expect(deliveries[1]?.headers["webhook-id"]).toBe(deliveries[0]?.headers["webhook-id"]);
    expect(deliveries[1]?.body).toEqual(deliveries[0]?.body);
    // Answered: the saved job is gone.
    const jobs = createDurablePendingJobStore(poolEnv.CONVERSATIONS);
    expect(
      await jobs.get({ id: queued.id, channel: "webhook", conversationId: queued.message.conversationId }),
    ).toBeUndefined();
  });

  it("backs off exponentially with message.attempts", async () => {
    captureLogs();
    fakeReceiver(() => new Response(null, { status: 500 }));
    // random() = 0.999…: each delay is at the top of its jitter range.
    vi.spyOn(Math, "random").mockReturnValue(0.999_999);
    const env = testEnv(channelConfig({ delivery: { max_attempts: 10 } }), { WEBHOOK_SECRET: SECRET });
    const delays: (number | undefined)[] = [];
    const queued = queuedMessage({ conversationId: freshConversation() });
    const id = crypto.randomUUID();
    for (let attempts = 1; attempts <= 4; attempts += 1) {
      const result = await consume(env, [delivered(queued, attempts, id)]);
      delays.push(result.retryMessages[0]?.delaySeconds);
    }
    // initial_delay_ms 1000, doubling: ceilings 1, 2, 4, 8 s.
    expect(delays).toEqual([1, 2, 4, 8]);
  });

  it("sends a message whose delivery is not retryable (400) to the dead-letter queue, then acks it", async () => {
    const { lines } = captureLogs();
    const { deliveries } = fakeReceiver(() => new Response("no", { status: 400 }));
    const env = testEnv(channelConfig(), { WEBHOOK_SECRET: SECRET });
    const queued = queuedMessage({ conversationId: freshConversation() });
    const message = delivered(queued);

    const result = await consume(env, [message]);

    expect(deliveries).toHaveLength(1);
    expect(result.explicitAcks).toEqual([message.id]);
    expect(result.retryMessages).toEqual([]);
    expect(env.DEAD_LETTERS.sent).toHaveLength(1);
    const letter = readDeadLetterBody(env.DEAD_LETTERS.sent[0]);
    expect(letter !== undefined && "deadLetter" in letter).toBe(true);
    if (letter !== undefined && "deadLetter" in letter) {
      expect(letter.deadLetter.error).toMatchObject({ code: "delivery_failed", retryable: false, status: 400 });
      expect(letter.deadLetter.attempts).toBe(1);
      const job = letter.deadLetter.job;
      expect("stored" in job ? undefined : job.replies?.[0]?.id).toBe(deliveries[0]?.headers["webhook-id"]);
    }
    expect(lines.some((line) => line.level === "error" && line.message_id === queued.id && line.status === 400)).toBe(
      true,
    );
  });

  it("dead-letters a message once max_attempts is reached", async () => {
    captureLogs();
    fakeReceiver(() => new Response(null, { status: 503 }));
    const env = testEnv(channelConfig({ delivery: { max_attempts: 3 } }), { WEBHOOK_SECRET: SECRET });
    const queued = queuedMessage({ conversationId: freshConversation() });
    const id = crypto.randomUUID();

    expect((await consume(env, [delivered(queued, 1, id)])).retryMessages).toHaveLength(1);
    expect((await consume(env, [delivered(queued, 2, id)])).retryMessages).toHaveLength(1);
    const last = await consume(env, [delivered(queued, 3, id)]);

    expect(last.retryMessages).toEqual([]);
    expect(last.explicitAcks).toEqual([id]);
    const letter = readDeadLetterBody(env.DEAD_LETTERS.sent[0]);
    expect(letter !== undefined && "deadLetter" in letter ? letter.deadLetter.attempts : undefined).toBe(3);
  });

  it("counts max_age_ms per step: a delivery that just began is retried, even for an old message", async () => {
    captureLogs();
    fakeReceiver(() => new Response(null, { status: 503 }));
    const env = testEnv(channelConfig({ delivery: { max_age_ms: 60_000 } }), { WEBHOOK_SECRET: SECRET });
    const queued = queuedMessage({ conversationId: freshConversation(), receivedAt: Date.now() - 3_600_000 });
    const result = await consume(env, [delivered(queued, 1)]);
    expect(result.retryMessages).toHaveLength(1);
    expect(env.DEAD_LETTERS.sent).toEqual([]);
  });

  it("dead-letters a reply whose delivery has been failing longer than max_age_ms", async () => {
    captureLogs();
    fakeReceiver(() => new Response(null, { status: 503 }));
    const env = testEnv(channelConfig({ delivery: { max_age_ms: 60_000 } }), { WEBHOOK_SECRET: SECRET });
    const queued = queuedMessage({ conversationId: freshConversation(), receivedAt: Date.now() - 3_600_000 });
    const id = crypto.randomUUID();
    // The first run answers and fails to deliver; its saved progress starts the delivery step.
    expect((await consume(env, [delivered(queued, 1, id)])).retryMessages).toHaveLength(1);
    const jobs = createDurablePendingJobStore(poolEnv.CONVERSATIONS);
    const key = { id: queued.id, channel: "webhook", conversationId: queued.message.conversationId };
    const saved = await jobs.get(key);
    expect(saved?.replies).toHaveLength(1);
    if (saved !== undefined) await jobs.update({ ...saved, stepStartedAt: Date.now() - 3_600_000 });

    const result = await consume(env, [delivered(queued, 2, id)]);
    expect(result.retryMessages).toEqual([]);
    expect(result.explicitAcks).toEqual([id]);
    expect(env.DEAD_LETTERS.sent).toHaveLength(1);
  });

  it("never acks a failure the dead-letter queue refused: the message is retried", async () => {
    captureLogs();
    fakeReceiver(() => new Response(null, { status: 400 }));
    const env = testEnv(
      channelConfig(),
      { WEBHOOK_SECRET: SECRET },
      { deadLetters: createFakeQueue({ refuse: true }) },
    );
    const message = delivered(queuedMessage({ conversationId: freshConversation() }));
    const result = await consume(env, [message]);
    expect(result.explicitAcks).toEqual([]);
    expect(result.retryMessages.map((retry) => retry.msgId)).toEqual([message.id]);
  });

  it("settles each message of a batch on its own", async () => {
    captureLogs();
    fakeReceiver(
      (delivery) =>
        new Response(null, {
          status: delivery.body.text === "fail" ? 500 : delivery.body.text === "reject" ? 422 : 200,
        }),
    );
    const env = testEnv(channelConfig(), { WEBHOOK_SECRET: SECRET });
    const ok = delivered(queuedMessage({ conversationId: freshConversation(), text: "fine" }));
    const retry = delivered(queuedMessage({ conversationId: freshConversation(), text: "fail" }));
    const dead = delivered(queuedMessage({ conversationId: freshConversation(), text: "reject" }));

    const result = await consume(env, [ok, retry, dead]);

    expect(result.ackAll).toBe(false);
    expect(result.retryBatch.retry).toBe(false);
    expect([...result.explicitAcks].sort()).toEqual([ok.id, dead.id].sort());
    expect(result.retryMessages.map((message) => message.msgId)).toEqual([retry.id]);
    expect(env.DEAD_LETTERS.sent).toHaveLength(1);
  });

  it("answers the messages of one conversation in batch order, with sequence 1, 2, 3", async () => {
    captureLogs();
    const { deliveries } = fakeReceiver();
    const env = testEnv(channelConfig(), { WEBHOOK_SECRET: SECRET });
    const conversationId = freshConversation();
    const messages = ["one", "two", "three"].map((text) => delivered(queuedMessage({ conversationId, text })));
    const result = await consume(env, messages);
    expect(result.explicitAcks).toHaveLength(3);
    expect(deliveries.map((delivery) => [delivery.body.text, delivery.body.sequence])).toEqual([
      ["one", 1],
      ["two", 2],
      ["three", 3],
    ]);
  });

  it("answers a message stored in its conversation's Durable Object, then deletes it", async () => {
    captureLogs();
    const { deliveries } = fakeReceiver();
    const env = testEnv(channelConfig(), { WEBHOOK_SECRET: SECRET });
    const queued = queuedMessage({ conversationId: freshConversation(), text: "y".repeat(200_000) });
    const jobs = createDurablePendingJobStore(poolEnv.CONVERSATIONS);
    const job = { message: queued, delivered: 0, attempts: 0 };
    await jobs.add(job);
    const key = jobKey(job);
    const message = delivered({ stored: key });

    const result = await consume(env, [message]);
    expect(result.explicitAcks).toEqual([message.id]);
    expect(deliveries[0]?.body.text).toBe(queued.message.text);
    expect(await jobs.get(key)).toBeUndefined();

    // A duplicate delivery of the reference finds nothing and is acked without a reply.
    const duplicate = delivered({ stored: key });
    expect((await consume(env, [duplicate])).explicitAcks).toEqual([duplicate.id]);
    expect(deliveries).toHaveLength(1);
  });

  it("sends an unreadable body to the dead-letter queue", async () => {
    captureLogs();
    const env = testEnv(channelConfig(), { WEBHOOK_SECRET: SECRET });
    const message = delivered({ hello: "world" });
    const result = await consume(env, [message]);
    expect(result.explicitAcks).toEqual([message.id]);
    expect(env.DEAD_LETTERS.sent).toEqual([{ hello: "world" }]);
  });

  it("leaves messages on the queue while the configuration is unusable", async () => {
    captureLogs();
    const env = testEnv(channelConfig(), { WEBHOOK_SECRET: "" });
    const message = delivered(queuedMessage({ conversationId: freshConversation() }));
    const result = await consume(env, [message]);
    expect(result.explicitAcks).toEqual([]);
    expect(result.retryMessages).toEqual([{ msgId: message.id, delaySeconds: 60 }]);
  });
});
