import { runInDurableObject } from "cloudflare:test";
import { afterEach, describe, expect, it, vi } from "vitest";
import { readDeadLetterBody } from "../../src/workers/queue-body.js";
import {
  alarmOf,
  conversation,
  eventually,
  forgetConversations,
  handOver,
  objectsUse,
  waiting,
} from "./support/conversations.js";
import type { FakeQueue } from "./support/fake-queue.js";
import { captureLogs, fakeReceiver } from "./support/fake-receiver.js";
import { delivered, queuedMessage } from "./support/queue-messages.js";
import { channelConfig, freshConversation, SECRET } from "./support/test-config.js";
import { testEnv } from "./support/test-env.js";

afterEach(async () => {
  await forgetConversations();
  vi.restoreAllMocks();
});

const retryLines = (lines: Record<string, unknown>[]) =>
  lines.filter((line) => line.level === "warn" && String(line.msg).startsWith("attempt failed"));

describe("retries in the conversation's Durable Object", () => {
  it("retries a failed delivery after the policy's delay, to the millisecond, honouring Retry-After, with the same reply", async () => {
    const { lines } = captureLogs();
    const times: number[] = [];
    const { deliveries } = fakeReceiver((_delivery, index) => {
      times.push(Date.now());
      return index === 0
        ? new Response(null, { status: 503, headers: { "retry-after": "1" } })
        : new Response(null, { status: 204 });
    });
    const env = objectsUse(testEnv(channelConfig({ delivery: { initial_delay_ms: 20 } }), { WEBHOOK_SECRET: SECRET }));
    const queued = queuedMessage({ conversationId: freshConversation() });
    const stub = conversation(queued.message.conversationId);
    await handOver(env, [delivered(queued)]);

    await eventually(() => expect(deliveries).toHaveLength(1));
    // Retry-After: 1 asks for more than the backoff (below 20 ms): the alarm is set a second on.
    await eventually(() => expect(retryLines(lines)).toHaveLength(1));
    expect(retryLines(lines)[0]).toMatchObject({ retry_in_ms: 1000, status: 503 });
    const alarm = (await alarmOf(stub)) ?? 0;
    expect(alarm - (times[0] ?? 0)).toBeGreaterThanOrEqual(1000);
    expect(alarm - (times[0] ?? 0)).toBeLessThan(3000);

    await eventually(() => expect(deliveries).toHaveLength(2), 5_000);
    // Alarms never fire early; a few milliseconds of slack for the isolate's coarse clock.
    expect((times[1] ?? 0) - (times[0] ?? 0)).toBeGreaterThanOrEqual(995);
    expect(deliveries[1]?.headers["webhook-id"]).toBe(deliveries[0]?.headers["webhook-id"]);
    expect(deliveries[1]?.body).toEqual(deliveries[0]?.body);
    await eventually(async () => expect(await waiting(stub)).toBe(0));
  });

  it("backs off exponentially with full jitter, in milliseconds", async () => {
    const { lines } = captureLogs();
    const times: number[] = [];
    fakeReceiver(() => {
      times.push(Date.now());
      return new Response(null, { status: 500 });
    });
    // random() = 0.999…: each delay is at the top of its jitter range.
    vi.spyOn(Math, "random").mockReturnValue(0.999_999);
    const env = objectsUse(
      testEnv(channelConfig({ delivery: { initial_delay_ms: 40, max_delay_ms: 1000, max_attempts: 10 } }), {
        WEBHOOK_SECRET: SECRET,
      }),
    );
    const queued = queuedMessage({ conversationId: freshConversation() });
    conversation(queued.message.conversationId);
    await handOver(env, [delivered(queued)]);

    await eventually(() => expect(times.length).toBeGreaterThanOrEqual(5), 10_000);
    // Ceilings 40, 80, 160, 320 ms, floored draws just below them.
    expect(
      retryLines(lines)
        .slice(0, 4)
        .map((line) => line.retry_in_ms),
    ).toEqual([39, 79, 159, 319]);
    const gaps = times.slice(1, 5).map((time, index) => time - (times[index] ?? 0));
    for (const [index, gap] of gaps.entries()) expect(gap).toBeGreaterThanOrEqual(([39, 79, 159, 319][index] ?? 0) - 5);
  });

  it("sends a reply the receiver refuses (400) to the dead-letter queue, then answers the next message", async () => {
    const { lines } = captureLogs();
    const { deliveries } = fakeReceiver(
      (delivery) => new Response(null, { status: delivery.body.text === "no" ? 400 : 200 }),
    );
    const env = objectsUse(testEnv(channelConfig(), { WEBHOOK_SECRET: SECRET }));
    const conversationId = freshConversation();
    conversation(conversationId);
    const refused = queuedMessage({ conversationId, text: "no" });
    await handOver(env, [delivered(refused), delivered(queuedMessage({ conversationId, text: "next" }))]);

    await eventually(() => expect(deliveries).toHaveLength(2));
    expect(deliveries.map((delivery) => [delivery.body.text, delivery.body.sequence])).toEqual([
      ["no", 1],
      ["next", 2],
    ]);
    expect(env.DEAD_LETTERS.sent).toHaveLength(1);
    const letter = readDeadLetterBody(env.DEAD_LETTERS.sent[0]);
    expect(letter !== undefined && "deadLetter" in letter).toBe(true);
    if (letter !== undefined && "deadLetter" in letter) {
      expect(letter.deadLetter.error).toMatchObject({ code: "delivery_failed", retryable: false, status: 400 });
      expect(letter.deadLetter.attempts).toBe(1);
      const job = letter.deadLetter.job;
      expect("stored" in job ? undefined : job.replies?.[0]?.id).toBe(deliveries[0]?.headers["webhook-id"]);
    }
    const line = lines.find((entry) => entry.msg === "dead letter: outbound_url answered 400");
    expect(line).toMatchObject({ level: "error", message_id: refused.id, status: 400, reason: "not_retryable" });
  });

  it("dead-letters a message once max_attempts is reached", async () => {
    captureLogs();
    const { deliveries } = fakeReceiver(() => new Response(null, { status: 503 }));
    const env = objectsUse(
      testEnv(channelConfig({ delivery: { initial_delay_ms: 20, max_attempts: 3 } }), { WEBHOOK_SECRET: SECRET }),
    );
    const queued = queuedMessage({ conversationId: freshConversation() });
    const stub = conversation(queued.message.conversationId);
    await handOver(env, [delivered(queued)]);

    await eventually(() => expect(env.DEAD_LETTERS.sent).toHaveLength(1));
    const letter = readDeadLetterBody(env.DEAD_LETTERS.sent[0]);
    expect(letter !== undefined && "deadLetter" in letter ? letter.deadLetter.attempts : undefined).toBe(3);
    expect(deliveries).toHaveLength(3);
    expect(await waiting(stub)).toBe(0);
  });

  it("counts max_age_ms per step: a delivery that just began is retried, even for an old message", async () => {
    captureLogs();
    const { deliveries } = fakeReceiver(() => new Response(null, { status: 503 }));
    const env = objectsUse(testEnv(channelConfig({ delivery: { max_age_ms: 60_000 } }), { WEBHOOK_SECRET: SECRET }));
    const queued = queuedMessage({ conversationId: freshConversation(), receivedAt: Date.now() - 3_600_000 });
    const stub = conversation(queued.message.conversationId);
    await handOver(env, [delivered(queued)]);
    await eventually(() => expect(deliveries).toHaveLength(1));
    await eventually(async () => expect(await alarmOf(stub)).toBeGreaterThan(Date.now()));
    expect(await waiting(stub)).toBe(1);
    expect(env.DEAD_LETTERS.sent).toEqual([]);
  });

  it("delivers a reply an earlier version saved in the lane row itself, once, with its number, and remembers its id", async () => {
    captureLogs();
    const { deliveries } = fakeReceiver((_delivery, index) =>
      index === 0 ? new Response(null, { status: 503, headers: { "retry-after": "1" } }) : new Response(null),
    );
    const env = objectsUse(testEnv(channelConfig({ delivery: { initial_delay_ms: 20 } }), { WEBHOOK_SECRET: SECRET }));
    const queued = queuedMessage({ conversationId: freshConversation() });
    const stub = conversation(queued.message.conversationId);
    await handOver(env, [delivered(queued)]);
    await eventually(() => expect(deliveries).toHaveLength(1));
    // As versions before 0.2 kept a job with replies: in its lane row, marked started, and no
    // `answered` row until it was answered.
    await runInDurableObject(stub, (_instance, state) => {
      const progress = state.storage.sql.exec<{ job: string }>("SELECT job FROM answered").one().job;
      state.storage.sql.exec("DELETE FROM answered");
      state.storage.sql.exec("UPDATE lane SET job = ?, started = 1", progress);
    });

    await eventually(() => expect(deliveries).toHaveLength(2), 5_000);
    expect(deliveries[1]?.body).toEqual(deliveries[0]?.body);
    expect(deliveries[1]?.headers["webhook-id"]).toBe(deliveries[0]?.headers["webhook-id"]);
    await eventually(async () => expect(await waiting(stub)).toBe(0));
    const answered = await runInDurableObject(stub, (_instance, state) =>
      state.storage.sql.exec<{ id: string; last_seq: number }>("SELECT id, last_seq FROM answered").toArray(),
    );
    expect(answered).toEqual([{ id: queued.id, last_seq: deliveries[0]?.body.sequence }]);
  });

  it("dead-letters a reply whose delivery has been failing longer than max_age_ms", async () => {
    captureLogs();
    const { deliveries } = fakeReceiver((_delivery, index) =>
      index === 0
        ? new Response(null, { status: 503, headers: { "retry-after": "1" } })
        : new Response(null, { status: 503 }),
    );
    const env = objectsUse(
      testEnv(channelConfig({ delivery: { initial_delay_ms: 20, max_age_ms: 60_000 } }), { WEBHOOK_SECRET: SECRET }),
    );
    const queued = queuedMessage({ conversationId: freshConversation() });
    const stub = conversation(queued.message.conversationId);
    await handOver(env, [delivered(queued)]);
    await eventually(() => expect(deliveries).toHaveLength(1));
    // While it waits a second for its retry, its delivery step is made an hour old.
    await runInDurableObject(stub, (_instance, state) => {
      // Its progress (it has a reply) is kept with its id in `answered`.
      state.storage.sql.exec(
        "UPDATE answered SET job = json_set(job, '$.stepStartedAt', ?) WHERE job IS NOT NULL",
        Date.now() - 3_600_000,
      );
    });

    await eventually(() => expect(env.DEAD_LETTERS.sent).toHaveLength(1), 5_000);
    expect(deliveries).toHaveLength(2);
  });

  it("keeps a dead job first in its conversation while the dead-letter queue refuses it, then sends it", async () => {
    const { lines } = captureLogs();
    const { deliveries } = fakeReceiver(
      (delivery) => new Response(null, { status: delivery.body.text === "no" ? 400 : 200 }),
    );
    let refuse = true;
    const sent: unknown[] = [];
    const deadLetters = {
      sent,
      send(body: unknown) {
        if (refuse) return Promise.reject(new Error("queue unavailable"));
        sent.push(body);
        return Promise.resolve();
      },
    } as unknown as FakeQueue;
    const env = objectsUse(testEnv(channelConfig(), { WEBHOOK_SECRET: SECRET }, { deadLetters }));
    const conversationId = freshConversation();
    const stub = conversation(conversationId);
    await handOver(env, [
      delivered(queuedMessage({ conversationId, text: "no" })),
      delivered(queuedMessage({ conversationId, text: "next" })),
    ]);

    await eventually(() =>
      expect(lines.some((line) => String(line.msg).startsWith("the dead-letter queue refused a message"))).toBe(true),
    );
    // Held for a minute, and the next message waits behind it.
    expect((await alarmOf(stub)) ?? 0).toBeGreaterThan(Date.now() + 50_000);
    expect(await waiting(stub)).toBe(2);
    expect(deliveries).toHaveLength(1);

    // The queue is back when the alarm comes.
    refuse = false;
    await runInDurableObject(stub, async (instance, state) => {
      state.storage.sql.exec("UPDATE lane SET next_at = 0 WHERE letter IS NOT NULL");
      await instance.alarm();
    });
    await eventually(() => expect(deliveries).toHaveLength(2));
    expect(sent).toHaveLength(1);
    expect(deliveries[1]?.body).toMatchObject({ text: "next", sequence: 2 });
    expect(await waiting(stub)).toBe(0);
  });
});
