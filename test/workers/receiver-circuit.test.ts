/**
 * The receiver circuit inside workerd, against a real HTTP receiver (the scripted upstream, on
 * Node): conversation objects post without asking anyone while the receiver answers, hold
 * their replies (spending no attempts) while it is down, one of them probing at a time, and the
 * receiver object wakes them all once it answers again. A receiver that never answers counts
 * as down as one that fails does, and its `Retry-After` sets the time of the next probe.
 */
import { runInDurableObject } from "cloudflare:test";
import { afterEach, describe, expect, it, vi } from "vitest";
import { conversationKey } from "../../src/core/conversation/conversation-store.js";
import worker from "../../src/workers/index.js";
import type { ReceiverObject } from "../../src/workers/receiver/receiver-object.js";
import type { ScriptedRequest } from "../shared/scripted-upstream-wire.js";
import { conversation, eventually, forgetConversations, handOver, objectsUse } from "./support/conversations.js";
import { captureLogs } from "./support/fake-receiver.js";
import { delivered, queuedMessage } from "./support/queue-messages.js";
import { scenario } from "./support/scripted-upstream-client.js";
import { SECRET } from "./support/test-config.js";
import { type TestEnv, testEnv } from "./support/test-env.js";

const receivers: DurableObjectStub<ReceiverObject>[] = [];

/**
 * A channel of its own per test (the receiver object and the isolate's view are per channel),
 * posting to `outboundUrl`.
 */
function circuitEnv(
  outboundUrl: string,
  delivery: Record<string, unknown>,
  botUrl?: string,
): { env: TestEnv; channel: string } {
  const channel = `circuit-${crypto.randomUUID()}`;
  const config = {
    channels: [
      {
        type: "webhook",
        name: channel,
        token_env: "WEBHOOK_SECRET",
        webhook: { path: "/circuit", outbound_url: outboundUrl, delivery },
      },
    ],
    ...(botUrl === undefined ? {} : { brains: { bot: { type: "http", url: botUrl } } }),
    routes: [{ channel, brain: botUrl === undefined ? "echo" : "bot" }],
  };
  return { env: objectsUse(testEnv(config, { WEBHOOK_SECRET: SECRET })), channel };
}

/** The channel's receiver object; its storage (and so its alarm) is deleted after the test. */
function receiverOf(env: TestEnv, channel: string): DurableObjectStub<ReceiverObject> {
  const stub = env.RECEIVERS.get(env.RECEIVERS.idFromName(channel));
  receivers.push(stub);
  return stub;
}

/** Hands one message to its conversation's object, which afterEach forgets. */
async function send(env: TestEnv, channel: string, conversationId: string): Promise<void> {
  conversation(conversationId, channel);
  await handOver(env, [delivered(queuedMessage({ conversationId, channel, text: conversationId }))]);
}

async function readyz(env: TestEnv): Promise<Record<string, unknown>> {
  const response = await worker.fetch(new Request("https://channel.example/readyz"), env);
  return (await response.json()) as Record<string, unknown>;
}

/** Rows the channel's receiver object keeps: none until a conversation reported to it. */
function receiverRows(env: TestEnv, channel: string): Promise<number> {
  return runInDurableObject(receiverOf(env, channel), (_instance, state) => {
    const count = (table: string) =>
      state.storage.sql.exec<{ n: number }>(`SELECT COUNT(*) AS n FROM ${table}`).one().n;
    return count("circuit") + count("channel") + count("waiting");
  });
}

/** The texts of the reply POSTs that the receiver answered with `status`. */
function textsAnswered(requests: readonly ScriptedRequest[], status: number): string[] {
  return requests
    .filter((request) => request.status === status)
    .map((request) => String((request.body as Record<string, unknown>).text));
}

afterEach(async () => {
  await forgetConversations();
  for (const stub of receivers.splice(0)) {
    await runInDurableObject(stub, async (_instance, state) => {
      await state.storage.deleteAll();
    });
  }
  vi.restoreAllMocks();
});

describe("the receiver circuit inside workerd", () => {
  it("costs no request to the receiver object while the receiver answers, past the isolate's first answer", async () => {
    captureLogs();
    const receiver = await scenario({ status: 200 });
    const { env, channel } = circuitEnv(`${receiver.url}/replies`, {});
    for (let c = 0; c < 3; c += 1) await send(env, channel, `healthy-${c}`);
    await eventually(async () => expect(await receiver.requests()).toHaveLength(3));
    const requests = await receiver.requests();
    expect(requests.map((request) => [request.method, request.path])).toEqual(Array(3).fill(["POST", "/replies"]));
    expect(textsAnswered(requests, 200).sort()).toEqual(["healthy-0", "healthy-1", "healthy-2"]);
    // The isolate's first answer of the channel was told, which the object keeps as the channel's
    // row: nothing else.
    expect(await receiverRows(env, channel)).toBe(1);
    expect(await readyz(env)).not.toHaveProperty("receivers_down");
  });

  it("holds every conversation while the receiver is down, spending no attempts, lists it in /readyz, and resumes them when it is back", async () => {
    const { lines } = captureLogs();
    const receiver = await scenario({ status: 503 });
    // Four attempts at most, 50 ms doubling to 200 ms: without the circuit, every message
    // would be a dead letter within a second of failures.
    const { env, channel } = circuitEnv(`${receiver.url}/replies`, {
      circuit_failures: 3,
      initial_delay_ms: 50,
      max_delay_ms: 200,
      max_attempts: 4,
    });
    const conversations = Array.from({ length: 6 }, (_, c) => `outage-${c}`);
    for (const conversationId of conversations) await send(env, channel, conversationId);
    await eventually(async () => {
      const report = await readyz(env);
      expect(report.status).toBe("ready");
      expect(report.receivers_down).toEqual([
        expect.objectContaining({ channel, waiting: expect.any(Number), down_for_ms: expect.any(Number) }),
      ]);
    });
    const postsWhenDown = (await receiver.requests()).length;
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    // The probe alone posts while it is down: 50, 100, 200, 200… ms apart, one at a time.
    expect((await receiver.requests()).length - postsWhenDown).toBeLessThanOrEqual(10);
    expect(await receiver.maxInFlight()).toBeLessThanOrEqual(3);
    expect(env.DEAD_LETTERS.sent).toEqual([]);

    await receiver.script({ status: 200 });
    await eventually(async () => expect(textsAnswered(await receiver.requests(), 200).sort()).toEqual(conversations));
    expect(env.DEAD_LETTERS.sent).toEqual([]);
    expect(await readyz(env)).not.toHaveProperty("receivers_down");
    expect(lines.find((line) => String(line.msg).startsWith("receiver down"))).toMatchObject({
      level: "warn",
      channel,
    });
    expect(lines.find((line) => String(line.msg).startsWith("receiver up"))).toMatchObject({ level: "info", channel });
  });

  it("brings a receiver the object held down from before this isolate back up at the isolate's first answer", async () => {
    captureLogs();
    const receiver = await scenario({ status: 200 });
    const { env, channel } = circuitEnv(`${receiver.url}/replies`, { circuit_failures: 2 });
    // The object took the receiver down before this isolate heard of the channel (as before a
    // deploy or an eviction), and nothing waits for it.
    const object = receiverOf(env, channel);
    const unanswered = { answered: false } as const;
    for (let failure = 0; failure < 2; failure += 1) await object.report(channel, unanswered, false, null);
    expect(await readyz(env)).toHaveProperty("receivers_down");

    await send(env, channel, "after-restart");
    await eventually(async () => expect(textsAnswered(await receiver.requests(), 200)).toEqual(["after-restart"]));
    await eventually(async () => expect(await readyz(env)).not.toHaveProperty("receivers_down"));
  });

  it("gives the probe to the next conversation when the one that waited longest has nothing left to post", async () => {
    captureLogs();
    const receiver = await scenario({ status: 503 });
    // The first probe a second after it goes down: both conversations are listed by then.
    const { env, channel } = circuitEnv(`${receiver.url}/replies`, {
      circuit_failures: 1,
      initial_delay_ms: 1_000,
      max_delay_ms: 1_000,
    });
    // A conversation listed as waiting whose job has since left its lane (say, dead at its max age).
    const circuit = receiverOf(env, channel);
    await circuit.report(channel, { answered: false }, false, conversationKey(channel, "gone"));
    await send(env, channel, "waiting");
    await eventually(async () => expect((await circuit.status()).waiting).toBe(2));
    await receiver.script({ status: 200 });
    // Well before the 25 s after which a probe that never reported is given up.
    await eventually(async () => expect(textsAnswered(await receiver.requests(), 200)).toEqual(["waiting"]), 5_000);
    await eventually(async () => expect(await circuit.status()).toMatchObject({ up: true, waiting: 0 }));
  });

  it("counts a receiver that never answers as down once the POSTs time out, and resumes when it answers", async () => {
    captureLogs();
    const receiver = await scenario({ hang: true });
    // Each POST gives up after 200 ms; two unanswered in a row take the receiver down. Two
    // attempts each: a probe that spent one would make its conversation a dead letter.
    const { env, channel } = circuitEnv(`${receiver.url}/replies`, {
      timeout_ms: 200,
      circuit_failures: 2,
      initial_delay_ms: 100,
      max_delay_ms: 200,
      max_attempts: 2,
    });
    const circuit = receiverOf(env, channel);
    await send(env, channel, "hung-0");
    await send(env, channel, "hung-1");
    await eventually(async () => expect(await circuit.status()).toMatchObject({ up: false }));
    expect((await readyz(env)).receivers_down).toEqual([expect.objectContaining({ channel })]);
    // The two POSTs that took it down, then two probes, all left hanging.
    await eventually(async () => expect((await receiver.requests()).length).toBeGreaterThanOrEqual(4));
    expect((await receiver.requests()).every((request) => request.status === null)).toBe(true);
    expect(env.DEAD_LETTERS.sent).toEqual([]);

    await receiver.script({ status: 200 });
    await eventually(async () =>
      expect(textsAnswered(await receiver.requests(), 200).sort()).toEqual(["hung-0", "hung-1"]),
    );
    await eventually(async () => expect(await circuit.status()).toMatchObject({ up: true, waiting: 0 }));
    expect(env.DEAD_LETTERS.sent).toEqual([]);
  });

  it.each([429, 503])("sets the next probe by the receiver's Retry-After when it answers %i", async (status) => {
    captureLogs();
    const receiver = await scenario({ status, headers: { "retry-after": "30" } });
    // Without Retry-After the first probe would come 50 ms after it goes down.
    const { env, channel } = circuitEnv(`${receiver.url}/replies`, {
      circuit_failures: 1,
      initial_delay_ms: 50,
      max_delay_ms: 60_000,
    });
    const circuit = receiverOf(env, channel);
    await send(env, channel, "limited");
    await eventually(async () => expect(await circuit.status()).toMatchObject({ up: false, waiting: 1 }));
    const { since, nextProbeAt } = await circuit.status();
    expect(nextProbeAt).toBe((since ?? Number.NaN) + 30_000);
    // No probe meanwhile, though the schedule alone would have sent several by now.
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(await receiver.requests()).toEqual([expect.objectContaining({ status, path: "/replies" })]);
  });

  it("brings the receiver up at the probe's first answered POST, while the rest of its replies are on their way", async () => {
    captureLogs();
    const receiver = await scenario({ status: 503 });
    const bot = await scenario({ body: { replies: [{ text: "first" }, { text: "second" }] } });
    // A POST left hanging is given up after 4 s: longer than the wait below.
    const { env, channel } = circuitEnv(
      `${receiver.url}/replies`,
      { circuit_failures: 1, initial_delay_ms: 50, max_delay_ms: 100, timeout_ms: 4_000 },
      `${bot.url}/chat`,
    );
    const circuit = receiverOf(env, channel);
    await send(env, channel, "probe-a");
    await eventually(async () => expect(await circuit.status()).toMatchObject({ up: false }));
    await send(env, channel, "probe-b");
    await eventually(async () => expect(await circuit.status()).toMatchObject({ waiting: 2 }));
    // The probe's first POST is answered, the next one is left hanging, the rest are answered.
    await receiver.script({ status: 200 }, { hang: true }, { status: 200 });
    const answeredTo = (requests: readonly ScriptedRequest[], conversationId: string) =>
      requests.filter(
        (request) =>
          request.status === 200 && (request.body as Record<string, unknown>).conversation_id === conversationId,
      ).length;
    // Before, the other conversation waited for the whole probe: its hanging POST's 4 s.
    await eventually(async () => {
      const requests = await receiver.requests();
      expect(answeredTo(requests, "probe-a") + answeredTo(requests, "probe-b")).toBe(3);
    }, 3_000);
    // The POST left hanging is given up and posted again: every reply answered, nothing waiting.
    await eventually(async () => {
      const requests = await receiver.requests();
      expect([answeredTo(requests, "probe-a"), answeredTo(requests, "probe-b")]).toEqual([2, 2]);
      expect(await circuit.status()).toMatchObject({ up: true, waiting: 0 });
    });
    expect(env.DEAD_LETTERS.sent).toEqual([]);
  });
});
