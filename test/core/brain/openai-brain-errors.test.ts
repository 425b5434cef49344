// How the openai brain fails: which answers of the model server are worth a retry (429, 5xx,
// timeouts, no connection) and which make the message dead, what the error says, and that it
// never carries the API key.

import { afterEach, describe, expect, it } from "vitest";
import { createOpenAiBrain } from "../../../src/core/brain/openai-brain.js";
import type { OpenAiBrainConfig } from "../../../src/core/config/brain-schema.js";
import { validateConfig } from "../../../src/core/config/validate-config.js";
import { manualClock, replyTexts, startBrainHarness } from "../../support/brain-harness.js";
import { failure } from "../../support/failure.js";
import { startJsonServer } from "../../support/json-test-server.js";
import { openAiError, rateLimited, startOpenAiCompatibleServer } from "../../support/openai-compatible-server.js";
import { API_KEY, closeAll, SYSTEM_PROMPT, setup, track } from "./openai-brain-harness.js";

afterEach(closeAll);

/** Config of one openai brain, defaults applied, as createBrains receives it. */
function openAiConfig(fields: Record<string, unknown>): OpenAiBrainConfig {
  const result = validateConfig({
    channels: [{ type: "webhook", token_env: "T", webhook: { outbound_url: "http://127.0.0.1:1/r" } }],
    routes: [{ channel: "webhook", brain: "bot" }],
    brains: { bot: { type: "openai", model: "test-model", ...fields } },
  });
  if (!result.ok) throw new Error(JSON.stringify(result.problems));
  const definition = result.config.brains?.bot;
  if (definition?.type !== "openai") throw new Error("not an openai brain");
  return definition;
}

describe("openai brain: conversation memory through the consumer", () => {
  it("retries a 429 after its Retry-After; the retry then succeeds and the history holds the message once", async () => {
    const { server, harness } = await setup();
    await harness.send("first", { conversationId: "c" });
    server.failNext(rateLimited(7));
    const queued = harness.message("second", { conversationId: "c" });
    const outcome = await harness.run(queued);
    expect(outcome.kind).toBe("retry");
    if (outcome.kind !== "retry") return;
    // random() is 0, so the backoff is 0 and the delay is exactly the server's Retry-After.
    expect(outcome.delayMs).toBe(7_000);
    expect(outcome.job.lastError).toMatchObject({ code: "brain_failed", retryable: true });
    expect(outcome.job.lastError?.message).toContain("answered 429 (rate_limit_exceeded)");
    expect(outcome.job.lastError?.detail).toMatch(/^Rate limit reached/);
    expect(harness.replies).toHaveLength(1);

    // The queue runs the same message again once the delay is over (until then the brain is
    // paused for everyone): the failed attempt left no trace in the history.
    harness.clock.advance(outcome.delayMs);
    expect((await harness.run(queued)).kind).toBe("done");
    await harness.send("third", { conversationId: "c" });
    expect(server.messagesOf(3).map((message) => message.content)).toEqual([
      SYSTEM_PROMPT,
      "first",
      'reply to "first"',
      "second",
      'reply to "second"',
      "third",
    ]);
    expect(replyTexts(harness.replies)).toEqual(['reply to "first"', 'reply to "second"', 'reply to "third"']);
  });

  it("makes a 429 a retryable brain_failed error with the server's code, its words apart, and retry_after_ms", async () => {
    const { server, harness } = await setup();
    server.failNext(rateLimited(7));
    const error = await failure(harness.ask("hi"));
    expect(error.code).toBe("brain_failed");
    expect(error.retryable).toBe(true);
    expect(error.message).toBe('brain "bot": the model server answered 429 (rate_limit_exceeded)');
    expect(error.upstreamMessage).toMatch(/^Rate limit reached/);
    expect(error.logFields()).toMatchObject({
      brain: "bot",
      upstream_status: 429,
      upstream_error_code: "rate_limit_exceeded",
      upstream_error_type: "requests",
      retry_after_ms: 7_000,
      url: `${server.baseUrl}/chat/completions`,
    });
  });

  it("reads Retry-After as an HTTP date against the injected clock, and prefers retry-after-ms", async () => {
    const clock = manualClock(Date.UTC(2025, 0, 1, 10, 0, 0));
    const server = track(await startOpenAiCompatibleServer());
    const brain = createOpenAiBrain("bot", openAiConfig({ base_url: server.baseUrl }), {
      fetch,
      env: () => undefined,
      clock,
    });
    const ask = () => brain.reply({ message: { senderId: "u", conversationId: "u", text: "hi" }, history: [] });
    server.failNext(
      openAiError(503, "overloaded", "server_error", null, { "retry-after": "Wed, 01 Jan 2025 10:00:30 GMT" }),
      openAiError(429, "slow down", "requests", null, { "retry-after": "3", "retry-after-ms": "1500" }),
    );
    expect((await failure(ask())).retryAfterMs).toBe(30_000);
    expect((await failure(ask())).retryAfterMs).toBe(1_500);
  });

  it.each([
    ["in a 400's error", 400],
    ["in a 200's error object (as gateways send one)", 200],
  ])("blanks the key a server echoes %s, where its words are cut and in its code and type", async (_, status) => {
    const { server, harness } = await setup();
    // The key straddles the place where the server's words are cut.
    const words = `${"x".repeat(480)} rejected ${API_KEY}`;
    server.failNext(openAiError(status, words, API_KEY, API_KEY));
    const error = await failure(harness.ask("hi"));
    const told = JSON.stringify([error.message, error.upstreamMessage, error.upstreamErrorType, error.logFields()]);
    expect(told).not.toContain(API_KEY.slice(0, 8));
  });

  it("makes a 401 a dead letter carrying the server's code and words, never the key", async () => {
    const { harness } = await setup({}, { OPENAI_API_KEY: "sk-wrong-key-9876543210" });
    const outcome = await harness.run(harness.message("hi"));
    expect(outcome.kind).toBe("dead");
    if (outcome.kind !== "dead") return;
    expect(outcome.error).toMatchObject({ code: "brain_failed", retryable: false });
    expect(outcome.error.message).toBe(
      'brain "bot": the model server answered 401 (invalid_api_key) (check the API key in OPENAI_API_KEY)',
    );
    expect(outcome.error.detail).toContain("Incorrect API key provided: sk-********3210");
    expect(JSON.stringify(outcome)).not.toContain("sk-wrong-key-9876543210");
    expect(harness.replies).toEqual([]);

    const error = await failure(harness.ask("hi"));
    expect(error.retryable).toBe(false);
    expect(error.logFields()).toMatchObject({ upstream_status: 401, upstream_error_code: "invalid_api_key" });
    expect(JSON.stringify(error.logFields())).not.toContain("sk-wrong");
  });

  it("blanks out the key when a server echoes it in its error", async () => {
    const server = track(await startOpenAiCompatibleServer({ apiKey: API_KEY, echoKeyInErrors: true }));
    const harness = track(
      await startBrainHarness({
        brains: { bot: { type: "openai", base_url: server.baseUrl, model: "test-model", api_key_env: "KEY" } },
        env: { KEY: "sk-leaked-by-the-server-123" },
      }),
    );
    const error = await failure(harness.ask("hi"));
    expect(error.upstreamMessage).toContain("Incorrect API key provided: [redacted]");
    expect(JSON.stringify({ message: error.message, words: error.upstreamMessage })).not.toContain("sk-leaked");
  });

  it("makes an unknown model a non-retryable error with the server's code and words", async () => {
    const { harness } = await setup({ model: "no-such-model" });
    expect((await harness.run(harness.message("hi"))).kind).toBe("dead");
    const error = await failure(harness.ask("hi"));
    expect(error.retryable).toBe(false);
    expect(error.message).toContain("answered 404 (model_not_found)");
    expect(error.upstreamMessage).toContain("The model `no-such-model` does not exist");
    expect(error.logFields()).toMatchObject({ upstream_status: 404, upstream_error_code: "model_not_found" });
  });

  it("makes 5xx, timeouts and unreachable servers retryable", async () => {
    const { server, harness } = await setup({ timeout_ms: 200 });
    server.failNext(openAiError(500, "The server had an error while processing your request.", "server_error", null));
    const crashed = await failure(harness.ask("a"));
    expect(crashed.retryable).toBe(true);
    expect(crashed.message).toContain("answered 500 (server_error)");
    expect(crashed.upstreamMessage).toContain("The server had an error");

    server.failNext({ status: 200, body: {}, delayMs: 2_000 });
    const slow = await failure(harness.ask("b"));
    expect(slow.retryable).toBe(true);
    expect(slow.message).toContain("within 200 ms");
    expect(slow.logFields()).toMatchObject({ timeout: true });

    const closed = await startJsonServer(() => ({ status: 200 }));
    await closed.close();
    const brain = createOpenAiBrain("gone", openAiConfig({ base_url: `${closed.origin}/v1` }), {
      fetch,
      env: () => undefined,
    });
    const unreachable = await failure(
      brain.reply({ message: { senderId: "u", conversationId: "u", text: "hi" }, history: [] }),
    );
    expect(unreachable.retryable).toBe(true);
    expect(unreachable.message).toMatch(
      /cannot reach the model server at http:\/\/127\.0\.0\.1:\d+\/v1\/chat\/completions/,
    );
  });

  it("does not follow redirects", async () => {
    const { server, harness } = await setup();
    server.failNext({ status: 301, headers: { location: "https://api.example.com/v1/chat/completions?key=x" } });
    const error = await failure(harness.ask("hi"));
    expect(error.retryable).toBe(false);
    expect(error.message).toContain("answered 301, a redirect to https://api.example.com/v1/chat/completions;");
  });

  it.each([
    ["a number", 503, true],
    ["its digits as text", "503", true],
    ["a name", "invalid_api_key", false],
    ["a number that is no status", 42, false],
  ])("reads a gateway's 200 with an error whose code is %s", async (_, code, retryable) => {
    const { server, harness } = await setup();
    server.failNext({ status: 200, body: { error: { message: "busy", code } } });
    const error = await failure(harness.ask("hi"));
    expect(error.retryable).toBe(retryable);
    expect(error.upstreamStatus).toBe(retryable ? 503 : undefined);
  });
});
