import { createExecutionContext, createMessageBatch, getQueueResult } from "cloudflare:test";
import { env as poolEnv } from "cloudflare:workers";
import { afterEach, expect, it, vi } from "vitest";
import type { ConversationObject } from "../../src/workers/conversation/conversation-object.js";
import { createDurableDeadLetterStore } from "../../src/workers/dead-letters/durable-dead-letter-store.js";
import worker from "../../src/workers/index.js";
import { captureLogs } from "./support/fake-receiver.js";
import { delivered, queuedMessage } from "./support/queue-messages.js";
import { channelConfig, freshConversation, SECRET } from "./support/test-config.js";
import { testEnv } from "./support/test-env.js";

/** The dead-letter queue consumer's `max_retries`, as wrangler.toml and the pool's config give it. */
const MAX_RETRIES = 100;

afterEach(() => {
  vi.restoreAllMocks();
});

/**
 * The dead-letter queue's consumer where what it needs is out of reach. The platform deletes a
 * message for good once its consumer has retried it `max_retries` times (that queue has no
 * dead-letter queue of its own), so every letter must be kept before then.
 */

// The inbound queue gives up on a hand-over when the conversation's object stays unreachable;
// the same object is then out of reach for the dead-letter consumer's check of a parked copy.
it("keeps a message the platform moved after max_retries while its conversation's object is still unreachable", async () => {
  captureLogs();
  // The conversation's object is unreachable: the reason the inbound queue gave up on the message.
  const unreachable = {
    idFromName: (name: string) => poolEnv.CONVERSATIONS.idFromName(name),
    get: () => ({
      storedJob: () => Promise.reject(new Error("object unavailable")),
      forgetJob: () => Promise.reject(new Error("object unavailable")),
      enqueue: () => Promise.reject(new Error("object unavailable")),
    }),
  } as unknown as DurableObjectNamespace<ConversationObject>;
  const env = { ...testEnv(channelConfig(), { WEBHOOK_SECRET: SECRET }), CONVERSATIONS: unreachable };
  // Carried inline: the body is the whole message.
  const queued = queuedMessage({ conversationId: freshConversation(), text: "do not lose me" });

  const id = crypto.randomUUID();
  const settled: string[] = [];
  for (let attempts = 1; attempts <= MAX_RETRIES + 1; attempts += 1) {
    const batch = createMessageBatch("webhook-channel-dead-letters", [delivered(queued, attempts, id)]);
    const ctx = createExecutionContext();
    await worker.queue(batch, env);
    const result = await getQueueResult(batch, ctx);
    settled.push(result.explicitAcks.length > 0 ? "ack" : result.retryMessages.length > 0 ? "retry" : "none");
    if (result.explicitAcks.length > 0) break;
  }

  const kept = await createDurableDeadLetterStore(poolEnv.DEAD_LETTER_STORE).one(queued.id);
  expect({ settled, kept: kept !== undefined }).toEqual({ settled: expect.arrayContaining(["ack"]), kept: true });
});

// A flood of dead letters brings the one dead-letter store near its limit ("overloaded"): the
// queue holds each letter, every delivery coming after the delay the consumer asked for.
it("keeps a conversation's dead letter through an hour's overload of the dead-letter store", async () => {
  captureLogs();
  const outageEndsAt = 3_600_000;
  let clock = 0;
  const overloaded = {
    idFromName: (name: string) => poolEnv.DEAD_LETTER_STORE.idFromName(name),
    get: (id: DurableObjectId) => {
      const real = poolEnv.DEAD_LETTER_STORE.get(id);
      return {
        keep: (letter: unknown) =>
          clock < outageEndsAt
            ? Promise.reject(new Error("Durable Object is overloaded. Too many requests queued."))
            : real.keep(letter as never),
      };
    },
  } as unknown as DurableObjectNamespace;
  const env = {
    ...testEnv(channelConfig(), { WEBHOOK_SECRET: SECRET }),
    DEAD_LETTER_STORE: overloaded,
  } as unknown as ReturnType<typeof testEnv>;
  const queued = queuedMessage({ conversationId: freshConversation(), text: "died at the receiver" });
  // The letter as a conversation's object sends it (the job inline), after which the job left its lane.
  const letter = {
    deadLetter: {
      job: { message: queued, delivered: 0, attempts: 1 },
      error: { code: "delivery_failed", message: "outbound_url answered 400", retryable: false, status: 400 },
      attempts: 1,
      diedAt: Date.now(),
    },
  };

  const id = crypto.randomUUID();
  let acked = false;
  for (let attempts = 1; attempts <= MAX_RETRIES + 1 && !acked; attempts += 1) {
    const batch = createMessageBatch("webhook-channel-dead-letters", [delivered(letter, attempts, id)]);
    let delaySeconds = 0;
    const message = batch.messages[0];
    if (message === undefined) throw new Error("no message");
    const retry = message.retry.bind(message);
    vi.spyOn(message, "retry").mockImplementation((options?: QueueRetryOptions) => {
      delaySeconds = options?.delaySeconds ?? 30;
      retry(options);
    });
    const ctx = createExecutionContext();
    await worker.queue(batch, env);
    acked = (await getQueueResult(batch, ctx)).explicitAcks.length > 0;
    clock += delaySeconds * 1000;
  }
  // The platform deletes it after its last retry; by then it must have been kept.
  const kept = await createDurableDeadLetterStore(poolEnv.DEAD_LETTER_STORE).one(queued.id);
  expect({ acked, kept: kept !== undefined, waitedSeconds: clock / 1000 }).toMatchObject({ acked: true, kept: true });
});
