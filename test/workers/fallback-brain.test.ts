/**
 * Fallback brains inside workerd, against real servers (the scripted upstream, on Node): the
 * http bot and the OpenAI-compatible server answer over HTTP, and so does the receiver. Workers
 * AI stays a fake binding: there is no real one locally.
 */
import { afterEach, describe, expect, it, vi } from "vitest";
import type { ScriptedRequest } from "../shared/scripted-upstream-wire.js";
import { conversation, eventually, forgetConversations, handOver, objectsUse } from "./support/conversations.js";
import { captureLogs } from "./support/fake-receiver.js";
import { delivered, queuedMessage } from "./support/queue-messages.js";
import { openAiCompletion, scenario } from "./support/scripted-upstream-client.js";
import { channelConfig, freshConversation, SECRET } from "./support/test-config.js";
import { testEnv } from "./support/test-env.js";

afterEach(async () => {
  await forgetConversations();
  vi.restoreAllMocks();
});

/** The reply fields the receiver was posted, in order. */
function postedReplies(requests: readonly ScriptedRequest[]): unknown[][] {
  return requests.map((request) => {
    const body = request.body as Record<string, unknown>;
    return [body.text, body.brain, body.sequence];
  });
}

describe("fallback brains inside workerd", () => {
  it("answers with the http fallback when Workers AI is out of capacity, naming it, in one history", async () => {
    const { lines } = captureLogs();
    const receiver = await scenario({ status: 200 });
    const bot = await scenario({ body: { text: "the bot answers" } });
    let runs = 0;
    const AI = {
      run() {
        runs += 1;
        return runs === 2
          ? Promise.reject(new Error("3040: Capacity temporarily exceeded, please try again."))
          : Promise.resolve({ response: `ai reply ${runs}` });
      },
    };
    const config = channelConfig({
      webhook: { outbound_url: `${receiver.url}/replies` },
      top: {
        brains: {
          ai: { type: "workers-ai", model: "@cf/meta/llama-3.1-8b-instruct", fallback: ["bot"] },
          bot: { type: "http", url: `${bot.url}/chat` },
        },
        routes: [{ channel: "webhook", brain: "ai" }],
      },
    });
    const conversationId = freshConversation();
    // Registered, so that afterEach forgets the conversation's object.
    conversation(conversationId);
    for (const [index, text] of ["first", "second"].entries()) {
      const env = objectsUse(testEnv(config, { WEBHOOK_SECRET: SECRET, AI }));
      await handOver(env, [delivered(queuedMessage({ conversationId, text }))]);
      await eventually(async () => expect(await receiver.requests()).toHaveLength(index + 1));
    }

    const replies = await receiver.requests();
    expect(replies.map((reply) => [reply.method, reply.path])).toEqual(Array(2).fill(["POST", "/replies"]));
    expect(postedReplies(replies)).toEqual([
      ["ai reply 1", "ai", 1],
      ["the bot answers", "bot", 2],
    ]);
    const asked = await bot.requests();
    expect(asked.map((request) => [request.method, request.path])).toEqual([["POST", "/chat"]]);
    expect(asked.map((request) => (request.body as Record<string, unknown>).history)).toEqual([
      [
        expect.objectContaining({ role: "user", text: "first" }),
        expect.objectContaining({ role: "assistant", text: "ai reply 1" }),
      ],
    ]);
    expect(lines).toContainEqual(
      expect.objectContaining({ level: "warn", msg: 'brain "ai" failed; fallback "bot" answered', brain: "bot" }),
    );
  });

  it("answers with the OpenAI-compatible fallback's text when the http bot's server fails", async () => {
    const { lines } = captureLogs();
    const receiver = await scenario({ status: 200 });
    const bot = await scenario({ status: 500, body: { error: "the bot crashed" } });
    const llm = await scenario(openAiCompletion("the model answers"));
    const config = channelConfig({
      webhook: { outbound_url: `${receiver.url}/replies` },
      top: {
        brains: {
          bot: { type: "http", url: `${bot.url}/chat`, fallback: ["llm"] },
          llm: { type: "openai", base_url: `${llm.url}/v1`, model: "test-model" },
        },
        routes: [{ channel: "webhook", brain: "bot" }],
      },
    });
    const conversationId = freshConversation();
    conversation(conversationId);
    const env = objectsUse(testEnv(config, { WEBHOOK_SECRET: SECRET }));
    await handOver(env, [delivered(queuedMessage({ conversationId, text: "hello" }))]);
    await eventually(async () => expect(await receiver.requests()).toHaveLength(1));

    expect(postedReplies(await receiver.requests())).toEqual([["the model answers", "llm", 1]]);
    expect(await bot.requests()).toHaveLength(1);
    const [completion, ...more] = await llm.requests();
    expect(more).toEqual([]);
    expect(completion).toMatchObject({
      method: "POST",
      path: "/v1/chat/completions",
      body: { model: "test-model", messages: [expect.objectContaining({ role: "user", content: "hello" })] },
    });
    expect(lines).toContainEqual(
      expect.objectContaining({ level: "warn", msg: 'brain "bot" failed; fallback "llm" answered', brain: "llm" }),
    );
  });
});
