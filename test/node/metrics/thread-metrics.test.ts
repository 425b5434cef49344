import { describe, expect, it } from "vitest";
import { createConsoleTally } from "../../../src/node/admin/console-tally.js";
import {
  applyMetricEvents,
  createThreadMetrics,
  type MetricEvent,
} from "../../../src/node/delivery-thread/thread-metrics.js";
import { createPrometheusMetrics } from "../../../src/node/metrics/prometheus-metrics.js";
import { sample } from "./scrape.js";

describe("metric events of the delivery thread", () => {
  it("reach the main thread's registry as the same counts and timings", async () => {
    const events: MetricEvent[] = [];
    const thread = createThreadMetrics((event) => events.push(event));
    thread.brainCall("a", "echo", true, 0.01);
    thread.brainCall("a", "echo", false, 0.02);
    thread.delivered("a", 0.003);
    thread.retry("a");
    thread.deadLetter("a");
    thread.endToEnd("a", 0.5);
    // Structured clone is what postMessage does to them.
    const received = structuredClone(events);
    const main = createPrometheusMetrics({ channels: ["a"], queues: () => new Map(), now: () => 0 });
    applyMetricEvents(main, received);
    const text = await main.registry.metrics();
    expect(sample(text, "webhook_channel_brain_calls_total", { channel: "a", brain: "echo", result: "ok" })).toBe(1);
    expect(sample(text, "webhook_channel_brain_calls_total", { channel: "a", brain: "echo", result: "error" })).toBe(1);
    expect(sample(text, "webhook_channel_brain_duration_seconds_sum", { channel: "a", brain: "echo" })).toBeCloseTo(
      0.03,
    );
    expect(sample(text, "webhook_channel_replies_delivered_total", { channel: "a" })).toBe(1);
    expect(sample(text, "webhook_channel_reply_retries_total", { channel: "a" })).toBe(1);
    expect(sample(text, "webhook_channel_dead_letters_total", { channel: "a" })).toBe(1);
    expect(sample(text, "webhook_channel_end_to_end_seconds_count", { channel: "a" })).toBe(1);
  });

  it("carry a brain's pause with its end to the console's tally, and its resumption", async () => {
    const events: MetricEvent[] = [];
    const thread = createThreadMetrics((event) => events.push(event));
    thread.brainInFlight("bot", 1);
    thread.brainPaused("bot", true, 9_000);
    const tally = createConsoleTally(true, () => 4_000);
    const main = createPrometheusMetrics({ channels: ["a"], queues: () => new Map(), now: () => 0 });
    const watched = tally.watching(main);
    if (watched === undefined) throw new Error("the tally hands back no metrics");
    applyMetricEvents(watched, structuredClone(events));
    // The tally's clock gives the start; the end is the one the thread's limiter sent.
    expect(tally.brains()).toEqual([
      {
        brain: "bot",
        in_flight: 1,
        paused: true,
        paused_since: "1970-01-01T00:00:04.000Z",
        paused_until: "1970-01-01T00:00:09.000Z",
      },
    ]);
    expect(sample(await main.registry.metrics(), "webhook_channel_brain_paused", { brain: "bot" })).toBe(1);

    applyMetricEvents(watched, structuredClone([["p", "bot", false, undefined]] satisfies MetricEvent[]));
    expect(tally.brains()[0]).toMatchObject({ paused: false, paused_since: null, paused_until: null });
  });
});
