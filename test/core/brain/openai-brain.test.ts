import { afterEach, describe, expect, it } from "vitest";
import { createBrains } from "../../../src/core/brain/create-brains.js";
import { chatCompletionsUrl, createOpenAiBrain } from "../../../src/core/brain/openai-brain.js";
import type { OpenAiBrainConfig } from "../../../src/core/config/brain-schema.js";
import { validateConfig } from "../../../src/core/config/validate-config.js";
import { conversationKey } from "../../../src/core/conversation/conversation-store.js";
import { type BrainHarness, manualClock, replyTexts, startBrainHarness } from "../../support/brain-harness.js";
import { failure } from "../../support/failure.js";
import { startJsonServer } from "../../support/json-test-server.js";
import {
  type OpenAiCompatibleServer,
  openAiError,
  rateLimited,
  startOpenAiCompatibleServer,
} from "../../support/openai-compatible-server.js";

const API_KEY = "sk-test-0123456789abcdefSECRET";
const SYSTEM_PROMPT = "You are a terse assistant.";

let server: OpenAiCompatibleServer | undefined;
let harness: BrainHarness | undefined;

afterEach(async () => {
  await harness?.close();
  await server?.close();
  harness = undefined;
  server = undefined;
});

async function setup(brain: Record<string, unknown> = {}, env: Record<string, string> = { OPENAI_API_KEY: API_KEY }) {
  server = await startOpenAiCompatibleServer({ apiKey: API_KEY });
  harness = await startBrainHarness({
    brains: {
      bot: {
        type: "openai",
        base_url: server.baseUrl,
        model: "test-model",
        api_key_env: "OPENAI_API_KEY",
        system_prompt: SYSTEM_PROMPT,
        ...brain,
      },
    },
    env,
  });
  return { server, harness };
}

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
  it("sends the first message and its reply with the second message of a conversation", async () => {
    const { server, harness } = await setup();
    await harness.send("My name is Ada.", { conversationId: "c-1" });
    await harness.send("What is my name?", { conversationId: "c-1" });

    expect(server.messagesOf(0)).toEqual([
      { role: "system", content: SYSTEM_PROMPT },
      { role: "user", content: "My name is Ada." },
    ]);
    expect(server.messagesOf(1)).toEqual([
      { role: "system", content: SYSTEM_PROMPT },
      { role: "user", content: "My name is Ada." },
      { role: "assistant", content: 'reply to "My name is Ada."' },
      { role: "user", content: "What is my name?" },
    ]);
    expect(replyTexts(harness.replies)).toEqual(['reply to "My name is Ada."', 'reply to "What is my name?"']);
    expect(harness.replies.map((reply) => (reply.body as { brain: string }).brain)).toEqual(["bot", "bot"]);
  });

  it("never lets two conversations see each other's history", async () => {
    const { server, harness } = await setup();
    await harness.send("a1", { conversationId: "A", senderId: "alice" });
    await harness.send("b1", { conversationId: "B", senderId: "bob" });
    await harness.send("a2", { conversationId: "A", senderId: "alice" });
    await harness.send("b2", { conversationId: "B", senderId: "bob" });

    const contents = (index: number) => server?.messagesOf(index).map((message) => message.content) ?? [];
    expect(contents(2)).toEqual([SYSTEM_PROMPT, "a1", 'reply to "a1"', "a2"]);
    expect(contents(3)).toEqual([SYSTEM_PROMPT, "b1", 'reply to "b1"', "b2"]);
    // The same sender in two conversations is two histories too.
    await harness.send("a-other", { conversationId: "A2", senderId: "alice" });
    expect(contents(4)).toEqual([SYSTEM_PROMPT, "a-other"]);
  });

  it("bounds the history by max_history, counting the user's and the brain's messages", async () => {
    const { server, harness } = await setup({ max_history: 3 });
    for (const text of ["m1", "m2", "m3", "m4"]) await harness.send(text, { conversationId: "c" });
    expect(server.messagesOf(3)).toEqual([
      { role: "system", content: SYSTEM_PROMPT },
      { role: "assistant", content: 'reply to "m2"' },
      { role: "user", content: "m3" },
      { role: "assistant", content: 'reply to "m3"' },
      { role: "user", content: "m4" },
    ]);
  });

  it("stores nothing and sends no history with max_history 0", async () => {
    const { server, harness } = await setup({ max_history: 0 });
    await harness.send("one", { conversationId: "c" });
    await harness.send("two", { conversationId: "c" });
    expect(server.messagesOf(1)).toEqual([
      { role: "system", content: SYSTEM_PROMPT },
      { role: "user", content: "two" },
    ]);
    expect(await harness.store.history(conversationKey("webhook", "c"), 10)).toEqual([]);
  });

  it("sends the system prompt, the model, the options and the API key as a Bearer header", async () => {
    const { server, harness } = await setup({ temperature: 0.2, max_tokens: 64 });
    await harness.send("hi");
    const request = server.requests[0];
    expect(request?.method).toBe("POST");
    expect(request?.path).toBe("/v1/chat/completions");
    expect(request?.headers.authorization).toBe(`Bearer ${API_KEY}`);
    expect(request?.headers["content-type"]).toBe("application/json");
    expect(request?.headers["user-agent"]).toMatch(/^webhook-channel\//);
    expect(request?.body).toEqual({
      model: "test-model",
      messages: [
        { role: "system", content: SYSTEM_PROMPT },
        { role: "user", content: "hi" },
      ],
      stream: false,
      temperature: 0.2,
      max_tokens: 64,
    });
  });

  it("sends no Authorization header and no system message when neither is configured", async () => {
    server = await startOpenAiCompatibleServer();
    harness = await startBrainHarness({
      brains: { bot: { type: "openai", base_url: `${server.baseUrl}/`, model: "test-model" } },
    });
    await harness.send("hi");
    expect(server.requests[0]?.headers.authorization).toBeUndefined();
    expect(server.messagesOf(0)).toEqual([{ role: "user", content: "hi" }]);
  });

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
    expect(outcome.job.lastError?.message).toContain("answered 429: Rate limit reached");
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

  it("makes a 429 a retryable brain_failed error with the server's message and retry_after_ms", async () => {
    const { server, harness } = await setup();
    server.failNext(rateLimited(7));
    const error = await failure(harness.ask("hi"));
    expect(error.code).toBe("brain_failed");
    expect(error.retryable).toBe(true);
    expect(error.message).toMatch(/^brain "bot": the model server answered 429: Rate limit reached/);
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
    server = await startOpenAiCompatibleServer();
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

  it("makes a 401 a dead letter carrying the server's message, never the key", async () => {
    const { harness } = await setup({}, { OPENAI_API_KEY: "sk-wrong-key-9876543210" });
    const outcome = await harness.run(harness.message("hi"));
    expect(outcome.kind).toBe("dead");
    if (outcome.kind !== "dead") return;
    expect(outcome.error).toMatchObject({ code: "brain_failed", retryable: false });
    expect(outcome.error.message).toContain(
      "the model server answered 401: Incorrect API key provided: sk-********3210",
    );
    expect(outcome.error.message).toContain("(check the API key in OPENAI_API_KEY)");
    expect(JSON.stringify(outcome)).not.toContain("sk-wrong-key-9876543210");
    expect(harness.replies).toEqual([]);

    const error = await failure(harness.ask("hi"));
    expect(error.retryable).toBe(false);
    expect(error.logFields()).toMatchObject({ upstream_status: 401, upstream_error_code: "invalid_api_key" });
    expect(JSON.stringify(error.logFields())).not.toContain("sk-wrong");
  });

  it("blanks out the key when a server echoes it in its error", async () => {
    server = await startOpenAiCompatibleServer({ apiKey: API_KEY, echoKeyInErrors: true });
    harness = await startBrainHarness({
      brains: { bot: { type: "openai", base_url: server.baseUrl, model: "test-model", api_key_env: "KEY" } },
      env: { KEY: "sk-leaked-by-the-server-123" },
    });
    const error = await failure(harness.ask("hi"));
    expect(error.message).toContain("Incorrect API key provided: [redacted]");
    expect(error.message).not.toContain("sk-leaked");
  });

  it("makes an unknown model a non-retryable error with the server's message", async () => {
    const { harness } = await setup({ model: "no-such-model" });
    expect((await harness.run(harness.message("hi"))).kind).toBe("dead");
    const error = await failure(harness.ask("hi"));
    expect(error.retryable).toBe(false);
    expect(error.message).toContain("The model `no-such-model` does not exist");
    expect(error.logFields()).toMatchObject({ upstream_status: 404, upstream_error_code: "model_not_found" });
  });

  it("makes 5xx, timeouts and unreachable servers retryable", async () => {
    const { server, harness } = await setup({ timeout_ms: 200 });
    server.failNext(openAiError(500, "The server had an error while processing your request.", "server_error", null));
    const crashed = await failure(harness.ask("a"));
    expect(crashed.retryable).toBe(true);
    expect(crashed.message).toContain("answered 500: The server had an error");

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

  it("sends an image as an image_url part and describes other media in text", async () => {
    const { server, harness } = await setup();
    await harness.send("What is this?", { mediaUrl: "https://example.com/cat.png?size=2" });
    await harness.send(undefined, { mediaUrl: "https://example.com/voice.ogg", mediaType: "audio/ogg" });
    expect(server.messagesOf(0).at(-1)).toEqual({
      role: "user",
      content: [
        { type: "text", text: "What is this?" },
        { type: "image_url", image_url: { url: "https://example.com/cat.png?size=2" } },
      ],
    });
    // The image stays in the history as an image; the audio is described.
    expect(server.messagesOf(1).slice(1)).toEqual([
      server.messagesOf(0).at(-1),
      { role: "assistant", content: 'reply to "What is this?"' },
      { role: "user", content: "[attachment (audio/ogg): https://example.com/voice.ogg]" },
    ]);
  });

  it("describes images in text with send_images false", async () => {
    const { server, harness } = await setup({ send_images: false });
    await harness.send("look", { mediaUrl: "https://example.com/a", mediaType: "image/jpeg" });
    expect(server.messagesOf(0).at(-1)).toEqual({ role: "user", content: "look\n\n[image: https://example.com/a]" });
  });

  it("reads content parts, delivers nothing for an empty answer, and rejects an answer that is not Chat Completions", async () => {
    let answer: string | readonly unknown[] | null = [
      { type: "text", text: "Hello " },
      { type: "text", text: "there" },
    ];
    server = await startOpenAiCompatibleServer({ answer: () => answer });
    harness = await startBrainHarness({
      brains: { bot: { type: "openai", base_url: server.baseUrl, model: "test-model" } },
    });
    await harness.send("hi");
    expect(replyTexts(harness.replies)).toEqual(["Hello there"]);

    answer = "   ";
    await harness.send("hi");
    answer = null;
    await harness.send("hi");
    expect(harness.replies).toHaveLength(1);

    server.failNext({ status: 200, raw: "<html>Open WebUI</html>", headers: { "content-type": "text/html" } });
    const html = await failure(harness.ask("hi"));
    expect(html.retryable).toBe(false);
    expect(html.message).toContain("the body is not JSON (content-type text/html)");

    server.failNext({ status: 200, body: { object: "list", data: [] } });
    const shape = await failure(harness.ask("hi"));
    expect(shape.retryable).toBe(false);
    expect(shape.message).toContain('expected a "choices" array');
  });

  it("does not follow redirects", async () => {
    const { server, harness } = await setup();
    server.failNext({ status: 301, headers: { location: "https://api.example.com/v1/chat/completions?key=x" } });
    const error = await failure(harness.ask("hi"));
    expect(error.retryable).toBe(false);
    expect(error.message).toContain("answered 301, a redirect to https://api.example.com/v1/chat/completions;");
  });

  it("refuses to be created without its API key, naming the variable only", () => {
    const result = validateConfig({
      channels: [{ type: "webhook", token_env: "T", webhook: { outbound_url: "http://127.0.0.1:1/r" } }],
      routes: [{ channel: "webhook", brain: "bot" }],
      brains: { bot: { type: "openai", base_url: "http://127.0.0.1:1/v1", model: "m", api_key_env: "OPENAI_API_KEY" } },
    });
    if (!result.ok) throw new Error(JSON.stringify(result.problems));
    const create = (value: string | undefined) => () =>
      createBrains(result.config, { fetch, env: (name) => (name === "OPENAI_API_KEY" ? value : undefined) });
    expect(create(undefined)).toThrow(/OPENAI_API_KEY \(brains\.bot\.api_key_env\) is not set/);
    expect(create("")).toThrow(/OPENAI_API_KEY \(brains\.bot\.api_key_env\) is empty/);
    expect(create("sk-x")().get("bot")?.historyLimit).toBe(20);
  });

  it("appends /chat/completions to the API root, keeping a query", () => {
    expect(chatCompletionsUrl("http://127.0.0.1:11434/v1")).toBe("http://127.0.0.1:11434/v1/chat/completions");
    expect(chatCompletionsUrl("http://127.0.0.1:11434/v1/")).toBe("http://127.0.0.1:11434/v1/chat/completions");
    expect(chatCompletionsUrl("https://x.example/openai/deployments/d?api-version=2024-10-21")).toBe(
      "https://x.example/openai/deployments/d/chat/completions?api-version=2024-10-21",
    );
  });
});
