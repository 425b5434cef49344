import { afterEach, describe, expect, it } from "vitest";
import { createBrains } from "../../../../src/core/brain/create-brains.js";
import { createBrainLimiters } from "../../../../src/core/brain/limits/brain-limits.js";
import { createLogSink } from "../../../support/log-sink.js";
import { waitFor } from "../../../support/wait-for.js";
import { closeServers, completion, startModelServer, tooMany } from "./counting-model-server.js";
import { ask, brainOf, configWith, deps, openai, recordingMetrics, storm } from "./limited-brains.js";

// Every brain server here is real, on port 0, and time is real too (short Retry-After values).
// The pauses a 429 or 503 starts, shared by every caller, are in brain-limits-pauses.test.ts.

afterEach(closeServers);

describe("brain limits: max_concurrency", () => {
  it("lets at most max_concurrency calls reach the brain at once when 30 conversations ask together", async () => {
    const server = await startModelServer(() => completion("ok"), 300);
    const brains = createBrains(configWith({ local: openai(server.baseUrl, { max_concurrency: 5 }) }), deps());
    const results = await storm(brainOf(brains, "local"), 30);
    expect(results.every((result) => result.status === "fulfilled")).toBe(true);
    expect(server.calls()).toBe(30);
    expect(server.maxInFlight()).toBe(5);
  });

  it.each([
    [4, 1],
    [1, 4],
  ])(
    "applies a reload's max_concurrency (%i to %i) to the calls already waiting, not only to later ones",
    async (before, after) => {
      const server = await startModelServer(() => completion("ok"), 150);
      const limiters = createBrainLimiters();
      const brainsWith = (max: number) =>
        brainOf(
          createBrains(configWith({ local: openai(server.baseUrl, { max_concurrency: max }) }), deps({ limiters })),
          "local",
        );
      const asked = storm(brainsWith(before), 16);
      await waitFor(() => (server.inFlight() === before ? true : undefined), 5_000, "the first calls in flight");
      server.resetPeak();
      // The reload builds the brains again over the same limiters, as the consumer's reload does.
      brainsWith(after);
      if (after > before) {
        await waitFor(() => (server.inFlight() === after ? true : undefined), 5_000, "the raised limit at once");
      }
      const results = await asked;
      expect(results.every((result) => result.status === "fulfilled")).toBe(true);
      expect(server.calls()).toBe(16);
      // Lowered: no call went out while more than the new limit were in flight.
      expect(server.maxInFlight()).toBe(after);
    },
  );

  it("keeps the limits it had when a reload's brains cannot all be built", async () => {
    const server = await startModelServer(() => completion("ok"), 100);
    const limiters = createBrainLimiters();
    const config = (max: number, fallbackKey: string) =>
      configWith({
        local: openai(server.baseUrl, { max_concurrency: max, fallback: ["spare"] }),
        spare: openai(server.baseUrl, { model: "spare-model", api_key_env: fallbackKey }),
      });
    const env = (name: string) => (name === "SPARE_KEY" ? "sk-spare" : undefined);
    const local = brainOf(createBrains(config(1, "SPARE_KEY"), deps({ limiters, env })), "local");
    // The reload raises the limit but names a key that is not set: it is refused.
    expect(() => createBrains(config(4, "UNSET_KEY"), deps({ limiters, env }))).toThrow(/UNSET_KEY/);
    const results = await storm(local, 6);
    expect(results.every((result) => result.status === "fulfilled")).toBe(true);
    expect(server.maxInFlight()).toBe(1);
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
