import { setTimeout as sleep } from "node:timers/promises";
import { afterEach, describe, expect, it } from "vitest";
import type { Brain, BrainCall } from "../../../../src/core/brain/brain.js";
import type { BrainDeps } from "../../../../src/core/brain/brain-deps.js";
import { createBrains } from "../../../../src/core/brain/create-brains.js";
import { createBrainLimiters } from "../../../../src/core/brain/limits/brain-limits.js";
import { ChannelError } from "../../../../src/core/channel-error.js";
import type { Config } from "../../../../src/core/config/config-schema.js";
import { validateConfig } from "../../../../src/core/config/validate-config.js";
import type { BrainReply } from "../../../../src/core/message/outbound-reply.js";
import type { Metrics } from "../../../../src/core/metrics/metrics.js";
import { noopMetrics } from "../../../../src/core/metrics/noop-metrics.js";
import { type BrainHarness, manualClock, replyTexts, startBrainHarness } from "../../../support/brain-harness.js";
import { failure } from "../../../support/failure.js";
import { type JsonTestServer, startJsonServer, type TestResponse } from "../../../support/json-test-server.js";
import { createLogSink } from "../../../support/log-sink.js";
import { openAiError, rateLimited, startOpenAiCompatibleServer } from "../../../support/openai-compatible-server.js";
import { waitFor } from "../../../support/wait-for.js";

// Every brain server here is real, on port 0. Time is real too (short Retry-After values),
// except where a test moves a manual clock to walk through a backoff.

/** A model server that counts the calls it has in flight at once. */
interface ModelServer extends JsonTestServer {
  readonly baseUrl: string;
  /** Chat Completions requests received. */
  calls(): number;
  /** The most requests it had in flight at once. */
  maxInFlight(): number;
  /** The `conversation_id` of each request, in arrival order (http brains send one). */
  conversations(): string[];
}

/**
 * Starts a model server that answers each request with `answer(index)` after `delayMs`,
 * counting what is in flight while it waits.
 */
async function startModelServer(
  answer: (index: number) => Omit<TestResponse, "delayMs">,
  delayMs: number,
): Promise<ModelServer> {
  let calls = 0;
  let inFlight = 0;
  let maxInFlight = 0;
  const conversations: string[] = [];
  const server = await startJsonServer(async (request) => {
    const index = calls;
    calls += 1;
    inFlight += 1;
    maxInFlight = Math.max(maxInFlight, inFlight);
    const body = request.body as { conversation_id?: unknown } | undefined;
    if (typeof body?.conversation_id === "string") conversations.push(body.conversation_id);
    try {
      await sleep(delayMs);
      return answer(index);
    } finally {
      inFlight -= 1;
    }
  });
  servers.push(server);
  return {
    ...server,
    baseUrl: `${server.origin}/v1`,
    calls: () => calls,
    maxInFlight: () => maxInFlight,
    conversations: () => [...conversations],
  };
}

/** An answer in OpenAI's Chat Completions format. */
function completion(content: string): Omit<TestResponse, "delayMs"> {
  return {
    status: 200,
    body: {
      id: "chatcmpl-1",
      object: "chat.completion",
      choices: [{ index: 0, message: { role: "assistant", content } }],
    },
  };
}

/** A 429 with `Retry-After` in seconds, in OpenAI's error format. */
function tooMany(retryAfterSeconds: number): Omit<TestResponse, "delayMs"> {
  return {
    status: 429,
    headers: { "retry-after": String(retryAfterSeconds) },
    body: { error: { message: "Rate limit reached", type: "requests", code: "rate_limit_exceeded" } },
  };
}

const servers: { close(): Promise<void> }[] = [];
let harness: BrainHarness | undefined;

afterEach(async () => {
  await harness?.close();
  harness = undefined;
  await Promise.all(servers.splice(0).map((server) => server.close()));
});

function track<T extends { close(): Promise<void> }>(server: T): T {
  servers.push(server);
  return server;
}

/** A configuration with these brains, `routed` taking the channel's messages. */
function configWith(brains: Record<string, unknown>, routed = "local"): Config {
  const result = validateConfig({
    channels: [{ type: "webhook", token_env: "T", webhook: { outbound_url: "http://127.0.0.1:1/r" } }],
    routes: [{ channel: "webhook", brain: routed }],
    brains,
  });
  if (!result.ok) throw new Error(JSON.stringify(result.problems));
  return result.config;
}

function openai(baseUrl: string, more: Record<string, unknown> = {}): Record<string, unknown> {
  return { type: "openai", base_url: baseUrl, model: "test-model", ...more };
}

function deps(more: Partial<BrainDeps> = {}): BrainDeps {
  return { fetch, env: () => undefined, ...more };
}

function brainOf(brains: ReadonlyMap<string, Brain>, name: string): Brain {
  const brain = brains.get(name);
  if (brain === undefined) throw new Error(`no brain ${name}`);
  return brain;
}

/** Asks `brain` as the consumer would, for one conversation of the channel "webhook". */
function ask(brain: Brain, conversationId: string, onCall?: (call: BrainCall) => void): Promise<readonly BrainReply[]> {
  return brain.reply({
    message: { senderId: conversationId, conversationId, text: `hi from ${conversationId}` },
    history: [],
    channel: "webhook",
    ...(onCall === undefined ? {} : { onCall }),
  });
}

/** Conversations c0 ... c(n-1) asking at once. */
function storm(
  brain: Brain,
  conversations: number,
  prefix = "c",
): Promise<PromiseSettledResult<readonly BrainReply[]>[]> {
  return Promise.allSettled(Array.from({ length: conversations }, (_, index) => ask(brain, `${prefix}${index}`)));
}

function errorsOf(results: readonly PromiseSettledResult<unknown>[]): ChannelError[] {
  return results.flatMap((result) => {
    if (result.status === "fulfilled") return [];
    if (result.reason instanceof ChannelError) return [result.reason];
    throw result.reason;
  });
}

/** A brain event as {@link recordingMetrics} keeps it; a pause with its end. */
type BrainEvent = [string, string, number | boolean] | [string, string, boolean, number];

/** Metrics that keep the brain events, in order. */
function recordingMetrics(): { metrics: Metrics; events: BrainEvent[] } {
  const events: BrainEvent[] = [];
  return {
    events,
    metrics: {
      ...noopMetrics,
      brainInFlight: (brain, calls) => events.push(["in_flight", brain, calls]),
      brainPaused: (brain, paused, untilMs) =>
        events.push(untilMs === undefined ? ["paused", brain, paused] : ["paused", brain, paused, untilMs]),
    },
  };
}

const isPaused = (error: ChannelError): boolean =>
  error.upstreamStatus === undefined && /is paused/.test(error.message);

describe("brain limits: max_concurrency", () => {
  it("lets at most max_concurrency calls reach the brain at once when 30 conversations ask together", async () => {
    const server = await startModelServer(() => completion("ok"), 300);
    const brains = createBrains(configWith({ local: openai(server.baseUrl, { max_concurrency: 5 }) }), deps());
    const results = await storm(brainOf(brains, "local"), 30);
    expect(results.every((result) => result.status === "fulfilled")).toBe(true);
    expect(server.calls()).toBe(30);
    expect(server.maxInFlight()).toBe(5);
  });

  it("admits waiting calls in turn per conversation, so one busy conversation cannot starve another", async () => {
    const server = await startModelServer(() => ({ status: 200, body: { text: "ok" } }), 30);
    const config = configWith({ bot: { type: "http", url: `${server.origin}/bot`, max_concurrency: 1 } }, "bot");
    const bot = brainOf(createBrains(config, deps()), "bot");
    const busy = Array.from({ length: 10 }, () => ask(bot, "busy"));
    const quiet = ask(bot, "quiet");
    const late = ask(bot, "late");
    await Promise.all([...busy, quiet, late]);
    // One call of "busy" was in flight and the next one's turn came first; then each
    // conversation's turn in the order they came, where a queue in arrival order would have
    // made "quiet" wait for all ten.
    expect(server.conversations().slice(0, 5)).toEqual(["busy", "busy", "quiet", "late", "busy"]);
    expect(server.conversations()).toHaveLength(12);
    expect(server.maxInFlight()).toBe(1);
  });

  it("never wraps echo: the built-in and an echo under another name answer without any limiter", async () => {
    const { metrics, events } = recordingMetrics();
    const brains = createBrains(configWith({ local: { type: "echo" } }), deps({ metrics }));
    const replies = await Promise.all(
      Array.from({ length: 100 }, (_, index) => ask(brainOf(brains, index % 2 === 0 ? "local" : "echo"), `c${index}`)),
    );
    expect(replies).toHaveLength(100);
    expect(events).toEqual([]);
  });
});

describe("brain limits: a 429 or 503 pauses the brain for everyone", () => {
  it("lets a 429 storm reach the brain at most max_concurrency + 1 times per pause, then resumes after Retry-After", async () => {
    // The server limits from its first request for 2 s, answering 429 with Retry-After: 2.
    let limitedUntil: number | undefined;
    const server = await startModelServer(() => {
      limitedUntil ??= Date.now() + 2_000;
      return Date.now() < limitedUntil ? tooMany(2) : completion("ok");
    }, 100);
    const sink = createLogSink("info");
    const brains = createBrains(configWith({ local: openai(server.baseUrl, { max_concurrency: 4 }) }), {
      ...deps(),
      logger: sink.logger,
    });
    const local = brainOf(brains, "local");

    const first = errorsOf(await storm(local, 40));
    expect(first).toHaveLength(40);
    // The 4 in flight met the 429; the 36 waiting for a slot were refused without a call.
    expect(first.filter((error) => error.upstreamStatus === 429)).toHaveLength(4);
    const refused = first.filter(isPaused);
    expect(refused).toHaveLength(36);
    for (const error of refused) {
      expect(error).toMatchObject({ code: "brain_failed", retryable: true, brain: "local" });
      expect(error.retryAfterMs).toBeGreaterThan(0);
      expect(error.retryAfterMs).toBeLessThanOrEqual(2_000);
    }

    // The storm goes on: every conversation asks again, three times, during the pause.
    for (let round = 0; round < 3; round += 1) {
      await sleep(200);
      const again = errorsOf(await storm(local, 40));
      expect(again.filter(isPaused)).toHaveLength(40);
    }
    expect(server.calls()).toBeLessThanOrEqual(4 + 1);

    await waitFor(() => sink.lines.find((line) => line.msg === 'brain "local" resumed'), 4_000, "the resumption");
    const after = await storm(local, 40);
    expect(after.every((result) => result.status === "fulfilled")).toBe(true);
    expect(server.maxInFlight()).toBeLessThanOrEqual(4);
  });

  it("pauses 1 s, 2 s ... after 503s without Retry-After, refusing calls at once meanwhile, and starts at 1 s again after a success", async () => {
    const clock = manualClock();
    const statuses = [503, 503, 200, 503];
    const server = await startModelServer(
      (index) =>
        statuses[index] === 200 ? completion("ok") : { status: 503, body: { error: { message: "overloaded" } } },
      0,
    );
    const local = brainOf(createBrains(configWith({ local: openai(server.baseUrl) }), deps({ clock })), "local");

    expect((await failure(ask(local, "a"))).upstreamStatus).toBe(503);
    const refused = await failure(ask(local, "b"));
    expect(isPaused(refused)).toBe(true);
    expect(refused).toMatchObject({ retryable: true, retryAfterMs: 1_000, brain: "local" });
    clock.advance(999);
    expect((await failure(ask(local, "b"))).retryAfterMs).toBe(1);
    expect(server.calls()).toBe(1);

    clock.advance(1);
    expect((await failure(ask(local, "b"))).upstreamStatus).toBe(503);
    expect((await failure(ask(local, "c"))).retryAfterMs).toBe(2_000);
    clock.advance(2_000);
    expect(await ask(local, "c")).toEqual([{ text: "ok" }]);
    expect((await failure(ask(local, "d"))).upstreamStatus).toBe(503);
    expect((await failure(ask(local, "e"))).retryAfterMs).toBe(1_000);
    expect(server.calls()).toBe(4);
  });

  it("passes a paused brain over at once in a fallback chain, without calling it", async () => {
    const local = track(await startOpenAiCompatibleServer({ answer: () => "local" }));
    const hosted = track(await startOpenAiCompatibleServer({ answer: () => "hosted" }));
    const config = configWith({
      local: openai(local.baseUrl, { fallback: ["hosted"] }),
      hosted: openai(hosted.baseUrl),
    });
    const chain = brainOf(createBrains(config, deps()), "local");
    local.failNext(rateLimited(30));
    expect(await ask(chain, "a")).toEqual([{ text: "hosted" }]);

    const calls: BrainCall[] = [];
    const started = performance.now();
    expect(await ask(chain, "b", (call) => calls.push(call))).toEqual([{ text: "hosted" }]);
    expect(performance.now() - started).toBeLessThan(1_000);
    expect(local.chatBodies()).toHaveLength(1);
    expect(calls.map((call) => call.brain)).toEqual(["local", "hosted"]);
    const skipped = calls[0]?.error;
    expect(skipped !== undefined && isPaused(skipped)).toBe(true);
    expect(skipped?.retryAfterMs).toBeGreaterThan(28_000);
  });

  it("holds a job whose whole chain is paused until the routed brain's pause ends, calling no brain meanwhile", async () => {
    const local = track(await startOpenAiCompatibleServer({ answer: () => "local" }));
    const hosted = track(await startOpenAiCompatibleServer({ answer: () => "hosted" }));
    harness = await startBrainHarness({
      brains: { local: openai(local.baseUrl, { fallback: ["hosted"] }), hosted: openai(hosted.baseUrl) },
      brain: "local",
    });
    local.failNext(rateLimited(7));
    hosted.failNext(rateLimited(3));
    const queued = harness.message("hi", { conversationId: "c" });
    expect(await harness.run(queued)).toMatchObject({ kind: "retry", delayMs: 7_000 });

    harness.clock.advance(2_000);
    // Both brains are still paused: the job waits for the routed brain's 5 s left.
    const held = await harness.run(queued);
    expect(held).toMatchObject({ kind: "retry", delayMs: 5_000 });
    expect(held.job.lastError).toMatchObject({ code: "brain_failed", retryable: true });
    expect(held.job.lastError?.message).toContain('brain "local" is paused');
    expect(local.chatBodies()).toHaveLength(1);
    expect(hosted.chatBodies()).toHaveLength(1);

    harness.clock.advance(5_000);
    expect((await harness.run(queued)).kind).toBe("done");
    expect(replyTexts(harness.replies)).toEqual(["local"]);
  });

  it("keeps a brain's pause across a rebuild with the same limiters while its server is unchanged", async () => {
    const clock = manualClock();
    const first = track(await startOpenAiCompatibleServer());
    const second = track(await startOpenAiCompatibleServer({ answer: () => "second" }));
    const { metrics, events } = recordingMetrics();
    const limiters = createBrainLimiters();
    const build = (baseUrl: string, more: Record<string, unknown> = {}) =>
      brainOf(createBrains(configWith({ local: openai(baseUrl, more) }), deps({ clock, metrics, limiters })), "local");

    first.failNext(openAiError(503, "overloaded", "server_error", null, { "retry-after": "30" }));
    expect((await failure(ask(build(first.baseUrl), "a"))).upstreamStatus).toBe(503);
    // A reload that changes other settings keeps the pause (and reports no new series).
    const reloaded = build(first.baseUrl, { max_concurrency: 2, system_prompt: "Be brief." });
    expect(isPaused(await failure(ask(reloaded, "a")))).toBe(true);
    expect(first.chatBodies()).toHaveLength(1);
    expect(events.filter(([kind, , value]) => kind === "paused" && value === false)).toHaveLength(1);
    // A new server is a new limiter.
    expect(await ask(build(second.baseUrl), "a")).toEqual([{ text: "second" }]);
    // Without shared limiters each build starts afresh.
    const fresh = createBrains(configWith({ local: openai(first.baseUrl) }), deps({ clock }));
    expect(await ask(brainOf(fresh, "local"), "a")).toEqual([{ text: 'reply to "hi from a"' }]);
  });
});

describe("brain limits: metrics and log lines", () => {
  it("reports each limited brain's calls in flight and its pause with its end, and logs the pause at warn and the resumption at info", async () => {
    let limited = false;
    const server = await startModelServer(() => (limited ? tooMany(1) : completion("ok")), 150);
    const { metrics, events } = recordingMetrics();
    const sink = createLogSink("info");
    const config = configWith({ local: openai(server.baseUrl, { max_concurrency: 3, fallback: ["echo"] }) });
    const chain = brainOf(createBrains(config, deps({ metrics, logger: sink.logger })), "local");
    // The series exist from the start; echo, a fallback here, has none.
    expect(events).toEqual([
      ["in_flight", "local", 0],
      ["paused", "local", false],
    ]);

    await storm(chain, 6);
    const inFlight = events.filter(([kind]) => kind === "in_flight").map(([, , calls]) => calls);
    expect(Math.max(...inFlight.map(Number))).toBe(3);
    expect(inFlight.at(-1)).toBe(0);
    expect(events.every(([, brain]) => brain === "local")).toBe(true);

    limited = true;
    expect(await ask(chain, "x")).toEqual([{ text: "hi from x" }]); // echo answered
    expect(events.at(-1)).toEqual(["in_flight", "local", 0]);
    const warn = sink.lines.find((line) => line.level === "warn");
    // The metric carries the pause's end, the same instant the log line gives.
    expect(events).toContainEqual(["paused", "local", true, Date.parse(String(warn?.resume_at))]);
    expect(warn).toMatchObject({
      msg: 'brain "local" paused for 1000 ms: its server answered 429',
      brain: "local",
      upstream_status: 429,
      pause_ms: 1_000,
      retry_after: true,
      resume_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
    });
    await waitFor(() => (events.at(-1)?.[1] === "local" && events.at(-1)?.[2] === false ? true : undefined), 3_000);
    expect(sink.lines.find((line) => line.level === "info")).toMatchObject({
      msg: 'brain "local" resumed',
      brain: "local",
      paused_ms: expect.any(Number),
    });
  });
});
