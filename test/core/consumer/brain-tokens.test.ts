import { afterEach, describe, expect, it } from "vitest";
import type { LogLevel } from "../../../src/core/log/logger.js";
import type { Metrics } from "../../../src/core/metrics/metrics.js";
import { noopMetrics } from "../../../src/core/metrics/noop-metrics.js";
import { type BrainHarness, JobFailed, startBrainHarness } from "../../support/brain-harness.js";
import { createLogSink } from "../../support/log-sink.js";
import {
  type OpenAiCompatibleServer,
  openAiError,
  startOpenAiCompatibleServer,
} from "../../support/openai-compatible-server.js";

// Every brain server here is real, on port 0: the fake OpenAI-compatible server answers each
// completion with usage { prompt_tokens: 10, completion_tokens: 5 }.

let local: OpenAiCompatibleServer | undefined;
let hosted: OpenAiCompatibleServer | undefined;
let harness: BrainHarness | undefined;

afterEach(async () => {
  await harness?.close();
  await local?.close();
  await hosted?.close();
  harness = undefined;
  local = undefined;
  hosted = undefined;
});

type Tokens = [channel: string, brain: string, prompt: number, completion: number];

/** Metrics that keep the brainTokens events, in order. */
function tokenMetrics(): { metrics: Metrics; tokens: Tokens[] } {
  const tokens: Tokens[] = [];
  return {
    tokens,
    metrics: { ...noopMetrics, brainTokens: (...event) => tokens.push(event) },
  };
}

/** "local" (routed) falls back on "hosted", both OpenAI-compatible; or "echo" alone. */
async function setup(level: LogLevel = "debug", brain = "local") {
  local = await startOpenAiCompatibleServer();
  hosted = await startOpenAiCompatibleServer();
  const { metrics, tokens } = tokenMetrics();
  const sink = createLogSink(level);
  harness = await startBrainHarness({
    brains: {
      local: { type: "openai", base_url: local.baseUrl, model: "test-model", fallback: ["hosted"] },
      hosted: { type: "openai", base_url: hosted.baseUrl, model: "test-model" },
    },
    brain,
    logger: sink.logger,
    metrics,
  });
  return { local, hosted, harness, tokens, logs: sink.lines };
}

const tokenLines = (logs: readonly Record<string, unknown>[]) =>
  logs.filter((line) => typeof line.msg === "string" && line.msg.startsWith("brain tokens"));

describe("brain tokens through the consumer", () => {
  it("counts each message's usage under its channel and brain, with one debug line per message", async () => {
    const { harness, tokens, logs } = await setup();
    const first = await harness.send("one", { conversationId: "c-1" });
    await harness.send("two", { conversationId: "c-1" });
    expect(tokens).toEqual([
      ["webhook", "local", 10, 5],
      ["webhook", "local", 10, 5],
    ]);
    const lines = tokenLines(logs);
    expect(lines).toHaveLength(2);
    expect(lines[0]).toMatchObject({
      level: "debug",
      msg: "brain tokens: 10 prompt, 5 completion",
      channel: "webhook",
      message_id: first.id,
      conversation_id: "c-1",
      brain: "local",
      prompt_tokens: 10,
      completion_tokens: 5,
    });
    expect(lines[0]).not.toHaveProperty("by_brain");
  });

  it("counts a fallback's tokens under the fallback, and a failed call's under its own brain", async () => {
    const { local, harness, tokens, logs } = await setup();
    // A gateway's 200 with an error object and a retryable code, that still reports usage.
    local.failNext({
      status: 200,
      body: { error: { message: "overloaded", code: 503 }, usage: { prompt_tokens: 3, completion_tokens: 0 } },
    });
    await harness.send("one");
    expect(tokens).toEqual([
      ["webhook", "local", 3, 0],
      ["webhook", "hosted", 10, 5],
    ]);
    expect(tokenLines(logs)).toEqual([
      expect.objectContaining({
        brain: "local",
        prompt_tokens: 13,
        completion_tokens: 5,
        by_brain: [
          { brain: "local", prompt_tokens: 3, completion_tokens: 0 },
          { brain: "hosted", prompt_tokens: 10, completion_tokens: 5 },
        ],
      }),
    ]);
  });

  it("counts only the brain that reported: a failure without usage counts nothing", async () => {
    const { local, harness, tokens, logs } = await setup();
    local.failNext(openAiError(503, "model is loading", "server_error", null));
    await harness.send("one");
    expect(tokens).toEqual([["webhook", "hosted", 10, 5]]);
    expect(tokenLines(logs)).toEqual([
      expect.objectContaining({ brain: "hosted", prompt_tokens: 10, completion_tokens: 5 }),
    ]);
  });

  it("counts the tokens of an attempt that failed after the server answered with usage", async () => {
    const { local, harness, tokens } = await setup();
    local.failNext({ status: 200, body: { choices: [], usage: { prompt_tokens: 8, completion_tokens: 2 } } });
    await expect(harness.send("one")).rejects.toBeInstanceOf(JobFailed);
    expect(tokens).toEqual([["webhook", "local", 8, 2]]);
  });

  it("still counts tokens above debug, without building the line", async () => {
    const { harness, tokens, logs } = await setup("info");
    await harness.send("one");
    expect(tokens).toEqual([["webhook", "local", 10, 5]]);
    expect(tokenLines(logs)).toEqual([]);
  });

  it("records nothing for a brain that reports no usage", async () => {
    const { harness, tokens, logs } = await setup("debug", "echo");
    await harness.send("one");
    expect(harness.replies).toHaveLength(1);
    expect(tokens).toEqual([]);
    expect(tokenLines(logs)).toEqual([]);
  });
});
