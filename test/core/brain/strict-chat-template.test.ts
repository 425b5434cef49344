import { afterEach, describe, expect, it } from "vitest";
import { conversationKey } from "../../../src/core/conversation/conversation-store.js";
import { type BrainHarness, startBrainHarness } from "../../support/brain-harness.js";
import { type JsonTestServer, type RecordedRequest, startJsonServer } from "../../support/json-test-server.js";
import {
  defaultAnswer,
  type OpenAiCompatibleServer,
  startOpenAiCompatibleServer,
} from "../../support/openai-compatible-server.js";

// The estimate: UTF-8 bytes / 4 rounded up, + 4 a message. "m1" is 5 tokens; the fake server's
// 'reply to "m1"' is 8.

let model: OpenAiCompatibleServer | undefined;
let bot: JsonTestServer | undefined;
let harness: BrainHarness | undefined;

afterEach(async () => {
  await harness?.close();
  await model?.close();
  await bot?.close();
  harness = undefined;
  model = undefined;
  bot = undefined;
});

const SYSTEM_PROMPT = "You are terse.";

async function converse(h: BrainHarness, count: number): Promise<void> {
  for (let index = 1; index <= count; index += 1) await h.send(`m${index}`, { conversationId: "c" });
}

describe("a strict chat template (Mistral's, Gemma's) accepts every request of an openai brain", () => {
  it.each([
    { name: "an odd max_history", bound: { max_history: 3 } },
    // From the newest: r2, m2, r1 fit; m1 does not.
    { name: "max_history_tokens", bound: { max_history_tokens: 21 } },
  ])("$name cutting between a message and its answer: the answer is not sent", async ({ bound }) => {
    model = await startOpenAiCompatibleServer({ strictRoles: true });
    harness = await startBrainHarness({
      brains: {
        bot: { type: "openai", base_url: model.baseUrl, model: "test-model", system_prompt: SYSTEM_PROMPT, ...bound },
      },
    });
    await converse(harness, 3);
    expect(model.messagesOf(2)).toEqual([
      { role: "system", content: SYSTEM_PROMPT },
      { role: "user", content: "m2" },
      { role: "assistant", content: 'reply to "m2"' },
      { role: "user", content: "m3" },
    ]);
  });

  it("a message the model said nothing to is sent with the next one, as one user turn", async () => {
    model = await startOpenAiCompatibleServer({
      strictRoles: true,
      answer: (messages) => (messages.at(-1)?.content === "m1" ? "" : defaultAnswer(messages)),
    });
    harness = await startBrainHarness({
      brains: { bot: { type: "openai", base_url: model.baseUrl, model: "test-model" } },
    });
    await converse(harness, 3);
    expect(model.messagesOf(1)).toEqual([{ role: "user", content: "m1\n\nm2" }]);
    expect(model.messagesOf(2)).toEqual([
      { role: "user", content: "m1\n\nm2" },
      { role: "assistant", content: 'reply to "m1\n\nm2"' },
      { role: "user", content: "m3" },
    ]);
    // The turns are stored as they were: only what is sent is merged.
    const stored = await harness.store.history(conversationKey("webhook", "c"), 100);
    expect(stored.map((turn) => [turn.role, turn.text])).toEqual([
      ["user", "m1"],
      ["user", "m2"],
      ["assistant", 'reply to "m1\n\nm2"'],
      ["user", "m3"],
      ["assistant", 'reply to "m3"'],
    ]);
  });

  it("several replies of an http bot in the shared history are one assistant turn", async () => {
    model = await startOpenAiCompatibleServer({ strictRoles: true });
    bot = await startJsonServer((request: RecordedRequest) => {
      const { message } = request.body as { message: { text?: string } };
      return message.text === "m1"
        ? { status: 200, body: { replies: [{ text: "one" }, { text: "two" }] } }
        : { status: 503, body: { error: "down" } };
    });
    harness = await startBrainHarness({
      brains: {
        mybot: { type: "http", url: `${bot.origin}/bot`, fallback: ["model"] },
        model: { type: "openai", base_url: model.baseUrl, model: "test-model" },
      },
      brain: "mybot",
    });
    await converse(harness, 2);
    expect(model.messagesOf(0)).toEqual([
      { role: "user", content: "m1" },
      { role: "assistant", content: "one\n\ntwo" },
      { role: "user", content: "m2" },
    ]);
  });
});
