// The openai brain through the consumer: what it sends (the conversation's history, the
// system prompt, the key, images) and how it reads the answer. How it fails, and what each
// failure does to the message, is in openai-brain-errors.test.ts.

import { afterEach, describe, expect, it } from "vitest";
import { createBrains } from "../../../src/core/brain/create-brains.js";
import { chatCompletionsUrl } from "../../../src/core/brain/openai-brain.js";
import { validateConfig } from "../../../src/core/config/validate-config.js";
import { conversationKey } from "../../../src/core/conversation/conversation-store.js";
import { replyTexts, startBrainHarness } from "../../support/brain-harness.js";
import { failure } from "../../support/failure.js";
import { startOpenAiCompatibleServer } from "../../support/openai-compatible-server.js";
import { API_KEY, closeAll, SYSTEM_PROMPT, setup, track } from "./openai-brain-harness.js";

afterEach(closeAll);

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
    const { server, harness } = await setup({ max_history: 4 });
    for (const text of ["m1", "m2", "m3", "m4"]) await harness.send(text, { conversationId: "c" });
    expect(server.messagesOf(3)).toEqual([
      { role: "system", content: SYSTEM_PROMPT },
      { role: "user", content: "m2" },
      { role: "assistant", content: 'reply to "m2"' },
      { role: "user", content: "m3" },
      { role: "assistant", content: 'reply to "m3"' },
      { role: "user", content: "m4" },
    ]);
  });

  it("leaves out an answer that an odd max_history cuts from its message", async () => {
    const { server, harness } = await setup({ max_history: 3 });
    for (const text of ["m1", "m2", "m3"]) await harness.send(text, { conversationId: "c" });
    expect(server.messagesOf(2)).toEqual([
      { role: "system", content: SYSTEM_PROMPT },
      { role: "user", content: "m2" },
      { role: "assistant", content: 'reply to "m2"' },
      { role: "user", content: "m3" },
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
    const server = track(await startOpenAiCompatibleServer());
    const harness = track(
      await startBrainHarness({
        brains: { bot: { type: "openai", base_url: `${server.baseUrl}/`, model: "test-model" } },
      }),
    );
    await harness.send("hi");
    expect(server.requests[0]?.headers.authorization).toBeUndefined();
    expect(server.messagesOf(0)).toEqual([{ role: "user", content: "hi" }]);
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
    const server = track(await startOpenAiCompatibleServer({ answer: () => answer }));
    const harness = track(
      await startBrainHarness({
        brains: { bot: { type: "openai", base_url: server.baseUrl, model: "test-model" } },
      }),
    );
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

  it("refuses to be created without its API key, naming the variable only", () => {
    const result = validateConfig({
      channels: [{ type: "webhook", token_env: "T", webhook: { outbound_url: "http://127.0.0.1:1/r" } }],
      routes: [{ channel: "webhook", brain: "bot" }],
      brains: {
        bot: { type: "openai", base_url: "http://127.0.0.1:11434/v1", model: "m", api_key_env: "OPENAI_API_KEY" },
      },
    });
    if (!result.ok) throw new Error(JSON.stringify(result.problems));
    const create = (value: string | undefined) => () =>
      createBrains(result.config, { fetch, env: (name) => (name === "OPENAI_API_KEY" ? value : undefined) });
    expect(create(undefined)).toThrow(/OPENAI_API_KEY \(brains\.bot\.api_key_env\) is not set/);
    expect(create("")).toThrow(/OPENAI_API_KEY \(brains\.bot\.api_key_env\) is empty/);
    // A key no header can carry would fail every call before it reached the server, as the network does.
    expect(create("sk-secret\u20acvalue")).toThrow(/OPENAI_API_KEY \(brains\.bot\.api_key_env\) contains characters/);
    expect(create("sk-x\u0007y")).toThrow(/OPENAI_API_KEY \(brains\.bot\.api_key_env\) contains characters/);
    // The whitespace around it a header never sends: a file's trailing newline is not a problem.
    expect(create("sk-x\n")().get("bot")?.historyLimit).toBe(20);
    try {
      create("sk-secret\u20acvalue")();
    } catch (error) {
      expect(String(error)).not.toContain("sk-secret");
    }
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
