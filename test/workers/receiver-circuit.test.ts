/**
 * The receiver circuit inside workerd: conversation objects post without asking anyone while
 * the receiver answers, hold their replies (spending no attempts) while it is down, one of
 * them probing at a time, and the receiver object wakes them all once it answers again.
 */
import { runInDurableObject } from "cloudflare:test";
import { afterEach, describe, expect, it, vi } from "vitest";
import { conversationKey } from "../../src/core/conversation/conversation-store.js";
import worker from "../../src/workers/index.js";
import { eventually, forgetConversations, handOver, objectsUse } from "./support/conversations.js";
import { captureLogs, fakeReceiver } from "./support/fake-receiver.js";
import { delivered, queuedMessage } from "./support/queue-messages.js";
import { OUTBOUND_URL, SECRET } from "./support/test-config.js";
import { type TestEnv, testEnv } from "./support/test-env.js";

/** A channel of its own per test: the receiver object and the isolate's view are per channel. */
function circuitEnv(delivery: Record<string, unknown>): { env: TestEnv; channel: string } {
  const channel = `circuit-${crypto.randomUUID()}`;
  const config = {
    channels: [
      {
        type: "webhook",
        name: channel,
        token_env: "WEBHOOK_SECRET",
        webhook: { path: "/circuit", outbound_url: OUTBOUND_URL, delivery },
      },
    ],
    routes: [{ channel, brain: "echo" }],
  };
  return { env: objectsUse(testEnv(config, { WEBHOOK_SECRET: SECRET })), channel };
}

async function readyz(env: TestEnv): Promise<Record<string, unknown>> {
  const response = await worker.fetch(new Request("https://channel.example/readyz"), env);
  return (await response.json()) as Record<string, unknown>;
}

/** Rows the channel's receiver object keeps: none until a conversation reported to it. */
function receiverRows(env: TestEnv, channel: string): Promise<number> {
  const stub = env.RECEIVERS.get(env.RECEIVERS.idFromName(channel));
  return runInDurableObject(stub, (_instance, state) => {
    const count = (table: string) =>
      state.storage.sql.exec<{ n: number }>(`SELECT COUNT(*) AS n FROM ${table}`).one().n;
    return count("circuit") + count("channel") + count("waiting");
  });
}

afterEach(async () => {
  await forgetConversations();
  vi.restoreAllMocks();
});

describe("the receiver circuit inside workerd", () => {
  it("costs no request to the receiver object while the receiver answers", async () => {
    captureLogs();
    const { env, channel } = circuitEnv({});
    const receiver = fakeReceiver();
    for (let c = 0; c < 3; c += 1) {
      await handOver(env, [delivered(queuedMessage({ conversationId: `healthy-${c}`, channel }))]);
    }
    await eventually(() => expect(receiver.deliveries).toHaveLength(3));
    expect(await receiverRows(env, channel)).toBe(0);
    expect(await readyz(env)).not.toHaveProperty("receivers_down");
  });

  it("holds every conversation while the receiver is down, spending no attempts, lists it in /readyz, and resumes them when it is back", async () => {
    const { lines } = captureLogs();
    // Four attempts at most, 50 ms doubling to 200 ms: without the circuit, every message
    // would be a dead letter within a second of failures.
    const { env, channel } = circuitEnv({
      circuit_failures: 3,
      initial_delay_ms: 50,
      max_delay_ms: 200,
      max_attempts: 4,
    });
    let down = true;
    const answered: string[] = [];
    const receiver = fakeReceiver((delivery) => {
      if (!down) answered.push(String(delivery.body.text));
      return new Response(null, { status: down ? 503 : 200 });
    });
    const conversations = Array.from({ length: 6 }, (_, c) => `outage-${c}`);
    for (const conversationId of conversations) {
      await handOver(env, [delivered(queuedMessage({ conversationId, channel, text: conversationId }))]);
    }
    await eventually(async () => {
      const report = await readyz(env);
      expect(report.status).toBe("ready");
      expect(report.receivers_down).toEqual([
        expect.objectContaining({ channel, waiting: expect.any(Number), down_for_ms: expect.any(Number) }),
      ]);
    });
    const postsWhenDown = receiver.deliveries.length;
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    // The probe alone posts while it is down: 50, 100, 200, 200… ms apart, one at a time.
    expect(receiver.deliveries.length - postsWhenDown).toBeLessThanOrEqual(10);
    expect(env.DEAD_LETTERS.sent).toEqual([]);

    down = false;
    await eventually(() => expect([...answered].sort()).toEqual(conversations));
    expect(env.DEAD_LETTERS.sent).toEqual([]);
    expect(await readyz(env)).not.toHaveProperty("receivers_down");
    expect(lines.find((line) => String(line.msg).startsWith("receiver down"))).toMatchObject({
      level: "warn",
      channel,
    });
    expect(lines.find((line) => String(line.msg).startsWith("receiver up"))).toMatchObject({ level: "info", channel });
  });

  it("gives the probe to the next conversation when the one that waited longest has nothing left to post", async () => {
    captureLogs();
    // The first probe a second after it goes down: both conversations are listed by then.
    const { env, channel } = circuitEnv({ circuit_failures: 1, initial_delay_ms: 1_000, max_delay_ms: 1_000 });
    let down = true;
    const answered: string[] = [];
    fakeReceiver((delivery) => {
      if (!down) answered.push(String(delivery.body.text));
      return new Response(null, { status: down ? 503 : 200 });
    });
    // A conversation listed as waiting whose job has since left its lane (say, dead at its max age).
    const receiver = env.RECEIVERS.get(env.RECEIVERS.idFromName(channel));
    await receiver.report(channel, { answered: false }, false, conversationKey(channel, "gone"));
    await handOver(env, [delivered(queuedMessage({ conversationId: "waiting", channel, text: "waiting" }))]);
    await eventually(async () => expect((await receiver.status()).waiting).toBe(2));
    down = false;
    // Well before the 25 s after which a probe that never reported is given up.
    await eventually(() => expect(answered).toEqual(["waiting"]), 5_000);
    await eventually(async () => expect(await receiver.status()).toMatchObject({ up: true, waiting: 0 }));
  });
});
