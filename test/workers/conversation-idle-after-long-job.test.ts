/**
 * A conversation is forgotten (its object deleted, its next reply numbered 1 again) 30 days after
 * its last activity, "to within an hour" (docs/delivery.md, Durability): a receiver that drops a
 * `sequence` it has passed is told to forget a conversation it has not heard from in 29 days and
 * 23 hours. A message that took longer than an hour (a receiver down, retried over days within
 * `max_age_ms`) must note its end as activity, as on Node; counted from its hand-over instead, the
 * conversation goes 30 days minus that wait after its last reply, and the receiver drops the next
 * reply (sequence 1, below the last it saw). Inside workerd.
 */
import { runInDurableObject } from "cloudflare:test";
import { afterEach, expect, it, vi } from "vitest";
import { CONVERSATION_TTL_MS } from "../../src/workers/conversation/conversation-expiry.js";
import {
  alarmOf,
  conversation,
  eventually,
  forgetConversations,
  handOver,
  objectsUse,
} from "./support/conversations.js";
import { captureLogs, fakeReceiver } from "./support/fake-receiver.js";
import { delivered, queuedMessage } from "./support/queue-messages.js";
import { channelConfig, freshConversation, SECRET } from "./support/test-config.js";
import { testEnv } from "./support/test-env.js";

const DAY_MS = 86_400_000;
const HOUR_MS = 3_600_000;

afterEach(async () => {
  await forgetConversations();
  vi.restoreAllMocks();
});

it("counts a conversation idle from the end of a message that waited two days, not from its hand-over", async () => {
  captureLogs();
  const { deliveries } = fakeReceiver((_delivery, index) =>
    index === 0
      ? new Response(null, { status: 503, headers: { "retry-after": "1" } })
      : new Response(null, { status: 200 }),
  );
  const env = objectsUse(
    testEnv(channelConfig({ delivery: { initial_delay_ms: 20, max_age_ms: 3 * DAY_MS } }), { WEBHOOK_SECRET: SECRET }),
  );
  // Accepted (and handed over) two days ago; its receiver has been failing since.
  const acceptedAt = Date.now() - 2 * DAY_MS;
  const queued = queuedMessage({ conversationId: freshConversation(), receivedAt: acceptedAt });
  const stub = conversation(queued.message.conversationId);
  await handOver(env, [delivered(queued)]);
  await eventually(() => expect(deliveries).toHaveLength(1));
  // The hand-over's activity, as it was noted when the message came two days ago.
  await runInDurableObject(stub, (_instance, state) => {
    state.storage.sql.exec("UPDATE counters SET value = ? WHERE name = 'touched_at'", acceptedAt);
  });

  // The receiver is back: the reply is delivered now.
  await eventually(() => expect(deliveries).toHaveLength(2), 5_000);
  const lastReplyAt = Date.now();
  expect(deliveries[1]?.body.sequence).toBe(1);

  // The object's alarm is now its expiry: 30 days after the last activity, which was the reply just delivered.
  await eventually(async () => expect(await alarmOf(stub)).toBeGreaterThan(lastReplyAt + DAY_MS));
  const expiresAt = await alarmOf(stub);
  expect(expiresAt).toBeGreaterThanOrEqual(lastReplyAt + CONVERSATION_TTL_MS - HOUR_MS);
});
