import { afterEach, describe, expect, it } from "vitest";
import { conversationKey } from "../../../src/core/conversation/conversation-store.js";
import type { Metrics } from "../../../src/core/metrics/metrics.js";
import { noopMetrics } from "../../../src/core/metrics/noop-metrics.js";
import { type BrainHarness, replyTexts, startBrainHarness } from "../../support/brain-harness.js";
import { freePort } from "../../support/free-port.js";
import { type JsonTestServer, type RecordedRequest, startJsonServer } from "../../support/json-test-server.js";
import { createLogSink } from "../../support/log-sink.js";
import {
  type OpenAiCompatibleServer,
  openAiError,
  rateLimited,
  startOpenAiCompatibleServer,
} from "../../support/openai-compatible-server.js";

// A local model (Ollama-like, "local") that falls back on a hosted one ("hosted"), and in the
// longer chains on the user's own bot ("bot", an http brain). Every server is real, on port 0.
// Which brains a chain holds, read from the configuration alone, is in fallback-chains.test.ts.

const LOCAL_PROMPT = "You are the local model.";
const HOSTED_PROMPT = "You are the hosted model.";

let local: OpenAiCompatibleServer | undefined;
let hosted: OpenAiCompatibleServer | undefined;
let bot: JsonTestServer | undefined;
let harness: BrainHarness | undefined;

afterEach(async () => {
  await harness?.close();
  await local?.close();
  await hosted?.close();
  await bot?.close();
  harness = undefined;
  local = undefined;
  hosted = undefined;
  bot = undefined;
});

/** The last user text of a Chat Completions request, for answers that say who answered. */
function lastUserText(messages: readonly { role: string; content: unknown }[]): string {
  const last = messages.filter((message) => message.role === "user").at(-1);
  return typeof last?.content === "string" ? last.content : "";
}

interface SetupOptions {
  readonly local?: Record<string, unknown>;
  readonly hosted?: Record<string, unknown>;
  /** Brains after "hosted" in local's fallback list; "bot" starts the http brain. */
  readonly more?: readonly string[];
  readonly metrics?: Metrics;
}

async function setup(options: SetupOptions = {}) {
  local = await startOpenAiCompatibleServer({ answer: (messages) => `local: ${lastUserText(messages)}` });
  hosted = await startOpenAiCompatibleServer({
    apiKey: "sk-hosted-0123456789",
    answer: (messages) => `hosted: ${lastUserText(messages)}`,
  });
  const brains: Record<string, unknown> = {
    local: {
      type: "openai",
      base_url: local.baseUrl,
      model: "test-model",
      system_prompt: LOCAL_PROMPT,
      fallback: ["hosted", ...(options.more ?? [])],
      ...options.local,
    },
    hosted: {
      type: "openai",
      base_url: hosted.baseUrl,
      model: "test-model",
      api_key_env: "HOSTED_KEY",
      system_prompt: HOSTED_PROMPT,
      ...options.hosted,
    },
  };
  if (options.more?.includes("bot") === true) {
    bot = await startJsonServer((request: RecordedRequest) => {
      const body = request.body as { message: { text?: string } };
      return { status: 200, body: { text: `bot: ${body.message.text ?? ""}` } };
    });
    brains.bot = { type: "http", url: `${bot.origin}/bot` };
  }
  const sink = createLogSink("info");
  harness = await startBrainHarness({
    brains,
    brain: "local",
    env: { HOSTED_KEY: "sk-hosted-0123456789" },
    logger: sink.logger,
    ...(options.metrics === undefined ? {} : { metrics: options.metrics }),
  });
  return { local, hosted, harness, logs: sink.lines };
}

/** The `brain` field of each delivered reply. */
function replyBrains(h: BrainHarness): unknown[] {
  return h.replies.map((reply) => (reply.body as { brain?: unknown }).brain);
}

describe("fallback brains", () => {
  it("answers with the fallback brain's text when the primary answers 503", async () => {
    const { local, hosted, harness } = await setup();
    local.failNext(openAiError(503, "model is loading", "server_error", null));
    await harness.send("hello");
    expect(replyTexts(harness.replies)).toEqual(["hosted: hello"]);
    expect(local.chatBodies()).toHaveLength(1);
    expect(hosted.chatBodies()).toHaveLength(1);
  });

  it("names the fallback brain in the reply's brain field, and the primary once it answers again", async () => {
    const { local, harness } = await setup();
    local.failNext(rateLimited(30));
    await harness.send("one");
    // The 429 paused "local" for 30 s (meanwhile "hosted" answers at once, see
    // limits/brain-limits-pauses.test.ts).
    harness.clock.advance(30_000);
    await harness.send("two");
    expect(replyTexts(harness.replies)).toEqual(["hosted: one", "local: two"]);
    expect(replyBrains(harness)).toEqual(["hosted", "local"]);
  });

  it("falls back at once when the primary times out", async () => {
    const { local, harness } = await setup({ local: { timeout_ms: 200 } });
    local.failNext({ status: 200, body: {}, delayMs: 2_000 });
    await harness.send("slow");
    expect(replyTexts(harness.replies)).toEqual(["hosted: slow"]);
  });

  it("falls back at once when the primary refuses the connection", async () => {
    const closed = await freePort();
    const { harness } = await setup({ local: { base_url: `http://127.0.0.1:${closed}/v1` } });
    await harness.send("anyone there?");
    expect(replyTexts(harness.replies)).toEqual(["hosted: anyone there?"]);
  });

  it("keeps one history across brains, each brain with its own max_history and system prompt", async () => {
    const { local, hosted, harness } = await setup({ local: { max_history: 10 }, hosted: { max_history: 2 } });
    await harness.send("m1", { conversationId: "c" });
    await harness.send("m2", { conversationId: "c" });
    local.failNext(openAiError(502, "bad gateway", "server_error", null));
    await harness.send("m3", { conversationId: "c" });
    await harness.send("m4", { conversationId: "c" });

    // The hosted brain saw its own prompt and the last 2 turns of the one history.
    expect(hosted.messagesOf(0)).toEqual([
      { role: "system", content: HOSTED_PROMPT },
      { role: "user", content: "m2" },
      { role: "assistant", content: "local: m2" },
      { role: "user", content: "m3" },
    ]);
    // The local brain, answering again, sees what the hosted one said, in the same history.
    expect(local.messagesOf(3)).toEqual([
      { role: "system", content: LOCAL_PROMPT },
      { role: "user", content: "m1" },
      { role: "assistant", content: "local: m1" },
      { role: "user", content: "m2" },
      { role: "assistant", content: "local: m2" },
      { role: "user", content: "m3" },
      { role: "assistant", content: "hosted: m3" },
      { role: "user", content: "m4" },
    ]);
    const stored = await harness.store.history(conversationKey("webhook", "c"), 100);
    expect(stored.map((turn) => turn.text)).toEqual([
      "m1",
      "local: m1",
      "m2",
      "local: m2",
      "m3",
      "hosted: m3",
      "m4",
      "local: m4",
    ]);
  });

  it("asks the next brain of the chain when the fallback fails too, even for good", async () => {
    const { local, hosted, harness } = await setup({ more: ["bot"] });
    local.failNext(openAiError(500, "boom", "server_error", null));
    hosted.failNext(openAiError(401, "Incorrect API key provided", "invalid_request_error", "invalid_api_key"));
    await harness.send("help");
    expect(replyTexts(harness.replies)).toEqual(["bot: help"]);
    expect(replyBrains(harness)).toEqual(["bot"]);
  });

  it("waits for a retry only when every brain of the chain failed, with the primary's error and Retry-After", async () => {
    const { local, hosted, harness } = await setup();
    local.failNext(rateLimited(7));
    hosted.failNext(openAiError(503, "overloaded", "server_error", null, { "retry-after": "60" }));
    const queued = harness.message("anyone?", { conversationId: "c" });
    const outcome = await harness.run(queued);
    expect(outcome.kind).toBe("retry");
    if (outcome.kind !== "retry") return;
    // random() is 0: the delay is exactly the primary's Retry-After, not the fallback's.
    expect(outcome.delayMs).toBe(7_000);
    expect(outcome.job.lastError).toMatchObject({ code: "brain_failed", retryable: true, status: 429 });
    expect(outcome.job.lastError?.message).toContain('brain "local"');
    expect(harness.replies).toEqual([]);
    expect(await harness.store.history(conversationKey("webhook", "c"), 100)).toEqual([]);

    // The retry, once its delay is over, starts again at the primary, which answers now.
    harness.clock.advance(outcome.delayMs);
    expect((await harness.run(queued)).kind).toBe("done");
    expect(replyTexts(harness.replies)).toEqual(["local: anyone?"]);
    expect(local.chatBodies()).toHaveLength(2);
    expect(hosted.chatBodies()).toHaveLength(1);
  });

  it("does not fall back on a non-retryable failure of the primary: the message is dead", async () => {
    const { local, hosted, harness } = await setup();
    local.failNext(openAiError(404, "model 'llama3.2' not found", "not_found_error", "model_not_found"));
    const outcome = await harness.run(harness.message("hi"));
    expect(outcome.kind).toBe("dead");
    if (outcome.kind !== "dead") return;
    expect(outcome.error).toMatchObject({ retryable: false, status: 404 });
    expect(outcome.error.message).toContain('brain "local"');
    expect(hosted.chatBodies()).toEqual([]);
    expect(harness.replies).toEqual([]);
  });

  it("logs at warn which brain failed, why, and which answered", async () => {
    const { local, harness, logs } = await setup();
    local.failNext(openAiError(503, "model is loading", "server_error", null));
    const queued = await harness.send("hello");
    const line = logs.find((entry) => entry.level === "warn");
    expect(line).toMatchObject({
      msg: 'brain "local" failed; fallback "hosted" answered',
      brain: "hosted",
      channel: "webhook",
      message_id: queued.id,
      failed: [{ brain: "local", upstream_status: 503, error: expect.stringContaining("answered 503 (server_error)") }],
    });
    expect(JSON.stringify(logs)).not.toContain("hello");
    // The server's own words may quote the message: never at warn.
    expect(JSON.stringify(line)).not.toContain("model is loading");
  });

  it("records brainCall for each brain actually called", async () => {
    const calls: [string, boolean][] = [];
    const metrics: Metrics = { ...noopMetrics, brainCall: (_channel, brain, ok) => calls.push([brain, ok]) };
    const { local, harness } = await setup({ metrics });
    await harness.send("one");
    local.failNext(openAiError(503, "model is loading", "server_error", null));
    await harness.send("two");
    expect(calls).toEqual([
      ["local", true],
      ["local", false],
      ["hosted", true],
    ]);
  });
});
