import { setTimeout as sleep } from "node:timers/promises";
import { afterEach, describe, expect, it } from "vitest";
import type { BrainCall } from "../../../../src/core/brain/brain.js";
import { createBrains } from "../../../../src/core/brain/create-brains.js";
import { createBrainLimiters } from "../../../../src/core/brain/limits/brain-limits.js";
import { type BrainHarness, manualClock, replyTexts, startBrainHarness } from "../../../support/brain-harness.js";
import { failure } from "../../../support/failure.js";
import { createLogSink } from "../../../support/log-sink.js";
import { openAiError, rateLimited, startOpenAiCompatibleServer } from "../../../support/openai-compatible-server.js";
import { waitFor } from "../../../support/wait-for.js";
import { closeServers, completion, startModelServer, tooMany, track } from "./counting-model-server.js";
import {
  ask,
  brainOf,
  configWith,
  deps,
  errorsOf,
  isPaused,
  openai,
  recordingMetrics,
  storm,
} from "./limited-brains.js";

// Every brain server here is real, on port 0. Time is real too (short Retry-After values),
// except where a test moves a manual clock to walk through a backoff. The limits on calls in
// flight, and the metrics and log lines, are in brain-limits.test.ts.

let harness: BrainHarness | undefined;

afterEach(async () => {
  await harness?.close();
  harness = undefined;
  await closeServers();
});

describe("brain limits: a 429 or 503 pauses the brain for everyone", () => {
  it("lets a 429 storm reach the brain at most max_concurrency + 1 times per pause, then resumes after Retry-After", async () => {
    // The server limits from its first request for 3 s, answering 429 with Retry-After: 3 (after
    // 100 ms): the brain's pause ends no earlier than the server's limit.
    let limitedUntil: number | undefined;
    const server = await startModelServer(() => {
      limitedUntil ??= Date.now() + 3_000;
      return Date.now() < limitedUntil ? tooMany(3) : completion("ok");
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
      expect(error.retryAfterMs).toBeLessThanOrEqual(3_000);
    }

    // The storm goes on: every conversation asks again, up to three times, during the pause. A
    // round starts only well before the server's limit ends (and so the pause, which ends after
    // it): on a loaded machine fewer rounds fit, but each one that runs falls inside the pause.
    let rounds = 0;
    for (let round = 0; round < 3; round += 1) {
      await sleep(200);
      if (limitedUntil === undefined || Date.now() > limitedUntil - 500) break;
      const again = errorsOf(await storm(local, 40));
      expect(again.filter(isPaused)).toHaveLength(40);
      rounds += 1;
    }
    expect(rounds).toBeGreaterThanOrEqual(1);
    expect(server.calls()).toBeLessThanOrEqual(4 + 1);

    await waitFor(() => sink.lines.find((line) => line.msg === 'brain "local" resumed'), 6_000, "the resumption");
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

  it("reports the pause of the server a reload moved the brain to, not the end of the old server's", async () => {
    const first = track(await startOpenAiCompatibleServer());
    const second = track(await startOpenAiCompatibleServer({ answer: () => "second" }));
    const { metrics, events } = recordingMetrics();
    const sink = createLogSink("info");
    const limiters = createBrainLimiters();
    const build = (baseUrl: string) =>
      brainOf(
        createBrains(configWith({ local: openai(baseUrl) }), deps({ metrics, limiters, logger: sink.logger })),
        "local",
      );
    const lastPause = () => events.filter(([kind]) => kind === "paused").at(-1);

    first.failNext(openAiError(503, "overloaded", "server_error", null, { "retry-after": "1" }));
    expect((await failure(ask(build(first.baseUrl), "a"))).upstreamStatus).toBe(503);
    expect(lastPause()?.[2]).toBe(true);
    // Moved to a server that is not paused: the brain runs.
    const moved = build(second.baseUrl);
    expect(lastPause()?.[2]).toBe(false);
    second.failNext(openAiError(503, "overloaded", "server_error", null, { "retry-after": "30" }));
    expect((await failure(ask(moved, "a"))).upstreamStatus).toBe(503);
    const secondPause = lastPause();
    expect(secondPause?.[2]).toBe(true);
    // The first server's pause runs out while the brain's new server keeps it paused.
    await waitFor(() => (sink.lines.some((line) => line.msg === 'brain "local" resumed') ? true : undefined), 5_000);
    expect(lastPause()).toEqual(secondPause);
  });
});
