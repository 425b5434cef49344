import { afterEach, describe, expect, it } from "vitest";
import { createPrometheusMetrics } from "../../../src/node/metrics/prometheus-metrics.js";
import { type BrainHarness, startBrainHarness } from "../../support/brain-harness.js";
import { type JsonTestServer, type RecordedRequest, startJsonServer } from "../../support/json-test-server.js";
import { sample } from "./scrape.js";

let server: JsonTestServer | undefined;
let harness: BrainHarness | undefined;

afterEach(async () => {
  await harness?.close();
  await server?.close();
  harness = undefined;
  server = undefined;
});

/**
 * A real OpenAI-compatible Chat Completions server on port 0 whose usage grows with each
 * answer (the n-th reports 100n prompt and n completion tokens); it answers 503 for the model
 * "loading".
 */
async function startCountingModel(): Promise<JsonTestServer> {
  let calls = 0;
  return startJsonServer((request: RecordedRequest) => {
    if ((request.body as { model?: unknown }).model === "loading") {
      return { status: 503, body: { error: { message: "loading", type: "server_error", code: null } } };
    }
    calls += 1;
    return {
      status: 200,
      body: {
        id: `chatcmpl-${calls}`,
        object: "chat.completion",
        choices: [{ index: 0, message: { role: "assistant", content: "ok" }, finish_reason: "stop" }],
        usage: { prompt_tokens: 100 * calls, completion_tokens: calls, total_tokens: 101 * calls },
      },
    };
  });
}

describe("webhook_channel_brain_tokens_total", () => {
  it("adds up the usage each brain reported, by channel, brain and kind", async () => {
    server = await startCountingModel();
    const metrics = createPrometheusMetrics({ channels: ["webhook"], queues: () => new Map(), now: () => 0 });
    harness = await startBrainHarness({
      brains: {
        local: { type: "openai", base_url: `${server.origin}/v1`, model: "m", fallback: ["hosted"] },
        hosted: { type: "openai", base_url: `${server.origin}/v1`, model: "m" },
      },
      brain: "local",
      metrics,
    });
    await harness.send("one");
    await harness.send("two");
    const text = await metrics.registry.metrics();
    expect(text).toContain('webhook_channel_brain_tokens_total{channel="webhook",brain="local",kind="prompt"} 300');
    expect(text).toContain('webhook_channel_brain_tokens_total{channel="webhook",brain="local",kind="completion"} 3');
    expect(sample(text, "webhook_channel_brain_tokens_total", { brain: "hosted", kind: "prompt" })).toBeUndefined();
  });

  it("counts a fallback's tokens under the fallback", async () => {
    server = await startCountingModel();
    const metrics = createPrometheusMetrics({ channels: ["webhook"], queues: () => new Map(), now: () => 0 });
    harness = await startBrainHarness({
      brains: {
        local: { type: "openai", base_url: `${server.origin}/v1`, model: "loading", fallback: ["hosted"] },
        hosted: { type: "openai", base_url: `${server.origin}/v1`, model: "m" },
      },
      brain: "local",
      metrics,
    });
    await harness.send("one");
    const text = await metrics.registry.metrics();
    expect(text).toContain('webhook_channel_brain_tokens_total{channel="webhook",brain="hosted",kind="prompt"} 100');
    expect(text).toContain('webhook_channel_brain_tokens_total{channel="webhook",brain="hosted",kind="completion"} 1');
    expect(sample(text, "webhook_channel_brain_tokens_total", { brain: "local", kind: "prompt" })).toBeUndefined();
  });
});
