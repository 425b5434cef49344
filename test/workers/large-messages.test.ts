/**
 * A message near the endpoint's 1 MiB, answered by echo: its job with the rendered reply is
 * longer than one Durable Object value holds (2 MB), and was never saved, so the message was
 * retried, then dead-lettered, and a replay failed the same way. It is kept in pieces now.
 */
import { env as poolEnv } from "cloudflare:workers";
import { afterEach, expect, it, vi } from "vitest";
import { jobKey } from "../../src/core/lifecycle/pending-job-store.js";
import { createDurablePendingJobStore } from "../../src/workers/conversation/durable-pending-job-store.js";
import { conversation, eventually, forgetConversations, handOver, objectsUse } from "./support/conversations.js";
import { captureLogs, fakeReceiver } from "./support/fake-receiver.js";
import { delivered, queuedMessage } from "./support/queue-messages.js";
import { channelConfig, freshConversation, SECRET } from "./support/test-config.js";
import { testEnv } from "./support/test-env.js";

afterEach(async () => {
  await forgetConversations();
  vi.restoreAllMocks();
});

it("answers a message of 800 KB of quotes with its echo, once, with nothing failing to save", async () => {
  const { lines } = captureLogs();
  const { deliveries } = fakeReceiver();
  const env = objectsUse(
    testEnv(channelConfig({ delivery: { initial_delay_ms: 100, max_attempts: 2 } }), { WEBHOOK_SECRET: SECRET }),
  );
  // Each quote is two characters in the message's JSON and four in the job's copy of its reply.
  const text = '"'.repeat(400_000);
  expect(new TextEncoder().encode(JSON.stringify({ sender_id: "u1", text })).byteLength).toBeLessThan(1_048_576);
  const queued = queuedMessage({ conversationId: freshConversation(), text });
  conversation(queued.message.conversationId);
  // Parked, as the endpoint parks a message too large for a queue message.
  const job = { message: queued, delivered: 0, attempts: 0 };
  await createDurablePendingJobStore(poolEnv.CONVERSATIONS, poolEnv.DEAD_LETTER_STORE).add(job);
  const message = delivered({ stored: jobKey(job) });
  expect((await handOver(env, [message])).explicitAcks).toEqual([message.id]);

  await eventually(() => expect(deliveries).toHaveLength(1), 8_000);
  expect(deliveries[0]?.body.text).toBe(text);
  expect(lines.filter((line) => line.level === "warn" || line.level === "error")).toEqual([]);
});
