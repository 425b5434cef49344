import { afterEach, describe, expect, it } from "vitest";
import { conversationKey } from "../../../src/core/conversation/conversation-store.js";
import { type BrainHarness, startBrainHarness } from "../../support/brain-harness.js";
import { type JsonTestServer, type RecordedRequest, startJsonServer } from "../../support/json-test-server.js";
import {
  type OpenAiCompatibleServer,
  openAiError,
  startOpenAiCompatibleServer,
} from "../../support/openai-compatible-server.js";

// The estimate: UTF-8 bytes / 4 rounded up, + 4 a message. "m1" is 5 tokens; the fake server's
// 'reply to "m1"' (13 bytes) is 8.

let model: OpenAiCompatibleServer | undefined;
let other: OpenAiCompatibleServer | undefined;
let bot: JsonTestServer | undefined;
let harness: BrainHarness | undefined;

afterEach(async () => {
  await harness?.close();
  await model?.close();
  await other?.close();
  await bot?.close();
  harness = undefined;
  model = undefined;
  other = undefined;
  bot = undefined;
});

const SYSTEM_PROMPT = "A system prompt long enough to be over any bound set here, which it never counts against.";

async function converse(h: BrainHarness, count: number): Promise<void> {
  for (let index = 1; index <= count; index += 1) await h.send(`m${index}`, { conversationId: "c" });
}

describe("max_history_tokens", () => {
  it("openai: sends the newest turns within the bound, the system prompt and the new message always", async () => {
    model = await startOpenAiCompatibleServer({ strictRoles: true });
    harness = await startBrainHarness({
      brains: {
        bot: {
          type: "openai",
          base_url: model.baseUrl,
          model: "test-model",
          system_prompt: SYSTEM_PROMPT,
          max_history_tokens: 21,
        },
      },
    });
    await converse(harness, 4);
    // From the newest: r3 8, m3 13, r2 21; m2 would make 26, and r2 is not sent without m2.
    expect(model.messagesOf(3)).toEqual([
      { role: "system", content: SYSTEM_PROMPT },
      { role: "user", content: "m3" },
      { role: "assistant", content: 'reply to "m3"' },
      { role: "user", content: "m4" },
    ]);
    // The turns are all stored: the bound shapes what is sent, not what is kept.
    expect(await harness.store.history(conversationKey("webhook", "c"), 100)).toHaveLength(8);
  });

  it("openai: a bound smaller than any turn sends the new message alone", async () => {
    model = await startOpenAiCompatibleServer();
    harness = await startBrainHarness({
      brains: { bot: { type: "openai", base_url: model.baseUrl, model: "test-model", max_history_tokens: 1 } },
    });
    await converse(harness, 2);
    expect(model.messagesOf(1)).toEqual([{ role: "user", content: "m2" }]);
  });

  it("http: the history the bot is sent is bounded the same way", async () => {
    bot = await startJsonServer((request: RecordedRequest) => {
      const body = request.body as { message: { text?: string } };
      return { status: 200, body: { text: `reply to "${body.message.text ?? ""}"` } };
    });
    harness = await startBrainHarness({
      brains: { bot: { type: "http", url: `${bot.origin}/bot`, max_history_tokens: 13 } },
    });
    await converse(harness, 3);
    const body = bot.requests[2]?.body as { history: { role: string; text?: string }[]; message: { text?: string } };
    expect(body.history.map((turn) => turn.text)).toEqual(["m2", 'reply to "m2"']);
    expect(body.message.text).toBe("m3");
  });

  it("a fallback chain: each brain is sent its own bound of the one history", async () => {
    model = await startOpenAiCompatibleServer();
    other = await startOpenAiCompatibleServer();
    harness = await startBrainHarness({
      brains: {
        local: {
          type: "openai",
          base_url: model.baseUrl,
          model: "test-model",
          max_history_tokens: 13,
          fallback: ["hosted"],
        },
        hosted: { type: "openai", base_url: other.baseUrl, model: "test-model" },
      },
      brain: "local",
    });
    await converse(harness, 2);
    model.failNext(openAiError(503, "loading", "server_error", null));
    await harness.send("m3", { conversationId: "c" });
    expect(model.messagesOf(2).map((message) => message.content)).toEqual(["m2", 'reply to "m2"', "m3"]);
    expect(other.messagesOf(0).map((message) => message.content)).toEqual([
      "m1",
      'reply to "m1"',
      "m2",
      'reply to "m2"',
      "m3",
    ]);
  });
});
