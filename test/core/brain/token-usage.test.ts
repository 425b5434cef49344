import { afterEach, describe, expect, it } from "vitest";
import type { Brain, BrainRequest } from "../../../src/core/brain/brain.js";
import type { AiBinding } from "../../../src/core/brain/brain-deps.js";
import { createBrains } from "../../../src/core/brain/create-brains.js";
import { type TokenUsage, usageOf } from "../../../src/core/brain/token-usage.js";
import { validateConfig } from "../../../src/core/config/validate-config.js";
import { type JsonTestServer, startJsonServer, type TestResponse } from "../../support/json-test-server.js";

let server: JsonTestServer | undefined;

afterEach(async () => {
  await server?.close();
  server = undefined;
});

/** The brain "bot" of a configuration with one route, built as the service builds it. */
function buildBot(definition: Record<string, unknown>, ai?: AiBinding): Brain {
  const result = validateConfig({
    channels: [{ type: "webhook", token_env: "T", webhook: { outbound_url: "http://127.0.0.1:1/r" } }],
    routes: [{ channel: "webhook", brain: "bot" }],
    brains: { bot: definition },
  });
  if (!result.ok) throw new Error(JSON.stringify(result.problems));
  const brain = createBrains(result.config, {
    fetch,
    env: () => undefined,
    ...(ai === undefined ? {} : { ai }),
  }).get("bot");
  if (brain === undefined) throw new Error("no brain bot");
  return brain;
}

/** Asks a brain once, collecting what it reports through `onUsage`. */
async function ask(brain: Brain): Promise<{ replies: unknown; usage: [string, TokenUsage][] }> {
  const usage: [string, TokenUsage][] = [];
  const request: BrainRequest = {
    message: { senderId: "u", conversationId: "c", text: "hello" },
    history: [],
    onUsage: (name, tokens) => usage.push([name, tokens]),
  };
  const replies = await brain.reply(request);
  return { replies, usage };
}

/** A Chat Completions answer carrying `usage` as given. */
function completion(usage: unknown, content: unknown = "hi"): TestResponse {
  return {
    status: 200,
    body: {
      id: "c-1",
      object: "chat.completion",
      choices: [{ index: 0, message: { role: "assistant", content } }],
      usage,
    },
  };
}

async function openAiBot(answer: TestResponse): Promise<Brain> {
  server = await startJsonServer(() => answer);
  return buildBot({ type: "openai", base_url: `${server.origin}/v1`, model: "m" });
}

describe("usageOf: a server's token counts, read defensively", () => {
  it("reads prompt_tokens and completion_tokens, ignoring the rest", () => {
    expect(usageOf({ usage: { prompt_tokens: 12, completion_tokens: 7, total_tokens: 19 } })).toEqual({
      prompt: 12,
      completion: 7,
    });
    expect(usageOf({ usage: { prompt_tokens: 0, completion_tokens: 0 } })).toEqual({ prompt: 0, completion: 0 });
  });

  it("takes a count that is missing or unusable as 0, and no usable count as no usage", () => {
    expect(usageOf({ usage: { prompt_tokens: 12 } })).toEqual({ prompt: 12, completion: 0 });
    expect(usageOf({ usage: { prompt_tokens: "12", completion_tokens: 3 } })).toEqual({ prompt: 0, completion: 3 });
    for (const bad of [-1, 1.5, Number.NaN, Number.POSITIVE_INFINITY, 2 ** 60, "7", null, true, {}]) {
      expect(usageOf({ usage: { prompt_tokens: bad, completion_tokens: bad } }), String(bad)).toBeUndefined();
    }
  });

  it("finds nothing in a body without a usage object", () => {
    for (const body of [undefined, null, "text", [], [{ usage: {} }], {}, { usage: null }, { usage: [1, 2] }]) {
      expect(usageOf(body), JSON.stringify(body)).toBeUndefined();
    }
  });
});

describe("brains report their usage through onUsage, under their own name", () => {
  it("openai: the answer's usage", async () => {
    const brain = await openAiBot(completion({ prompt_tokens: 21, completion_tokens: 4, total_tokens: 25 }));
    expect(await ask(brain)).toEqual({ replies: [{ text: "hi" }], usage: [["bot", { prompt: 21, completion: 4 }]] });
  });

  it("openai: a broken usage is ignored, never costing the reply", async () => {
    for (const usage of [{ prompt_tokens: -3, completion_tokens: "x" }, "lots", null]) {
      const brain = await openAiBot(completion(usage));
      expect(await ask(brain)).toEqual({ replies: [{ text: "hi" }], usage: [] });
      await server?.close();
      server = undefined;
    }
  });

  it("openai: an unusable 200 still reports the tokens it was billed for", async () => {
    const brain = await openAiBot({
      status: 200,
      body: { choices: "no", usage: { prompt_tokens: 9, completion_tokens: 1 } },
    });
    const usage: [string, TokenUsage][] = [];
    await expect(
      brain.reply({
        message: { senderId: "u", conversationId: "c", text: "hello" },
        history: [],
        onUsage: (name, tokens) => usage.push([name, tokens]),
      }),
    ).rejects.toMatchObject({ code: "brain_failed", retryable: false });
    expect(usage).toEqual([["bot", { prompt: 9, completion: 1 }]]);
  });

  it("http: an optional usage object next to the replies, or next to a single reply", async () => {
    const answers: TestResponse[] = [
      { status: 200, body: { replies: [{ text: "a" }], usage: { prompt_tokens: 30, completion_tokens: 2 } } },
      { status: 200, body: { text: "b", usage: { prompt_tokens: 31, completion_tokens: 3 } } },
      { status: 200, body: { text: "c" } },
      { status: 200, body: { text: "d", usage: { prompt_tokens: 1.5 } } },
    ];
    server = await startJsonServer(() => answers.shift() ?? { status: 500 });
    const brain = buildBot({ type: "http", url: `${server.origin}/bot` });
    expect(await ask(brain)).toEqual({ replies: [{ text: "a" }], usage: [["bot", { prompt: 30, completion: 2 }]] });
    expect(await ask(brain)).toEqual({ replies: [{ text: "b" }], usage: [["bot", { prompt: 31, completion: 3 }]] });
    expect(await ask(brain)).toEqual({ replies: [{ text: "c" }], usage: [] });
    expect(await ask(brain)).toEqual({ replies: [{ text: "d" }], usage: [] });
  });

  it("workers-ai: the usage of a { response } answer and of a Chat Completions shaped one", async () => {
    // Stands in for the Workers runtime's env.AI, which exists only inside workerd.
    const answers: unknown[] = [
      { response: "one", usage: { prompt_tokens: 40, completion_tokens: 6, total_tokens: 46 } },
      { choices: [{ message: { content: "two" } }], usage: { prompt_tokens: 41, completion_tokens: 7 } },
      { response: "three" },
    ];
    const ai: AiBinding = { run: () => Promise.resolve(answers.shift()) };
    const brain = buildBot({ type: "workers-ai", model: "@cf/meta/llama-3.1-8b-instruct" }, ai);
    expect(await ask(brain)).toEqual({ replies: [{ text: "one" }], usage: [["bot", { prompt: 40, completion: 6 }]] });
    expect(await ask(brain)).toEqual({ replies: [{ text: "two" }], usage: [["bot", { prompt: 41, completion: 7 }]] });
    expect(await ask(brain)).toEqual({ replies: [{ text: "three" }], usage: [] });
  });

  it("rasa and echo report none", async () => {
    server = await startJsonServer(() => ({ status: 200, body: [{ recipient_id: "c", text: "hey" }] }));
    expect(await ask(buildBot({ type: "rasa", url: server.origin }))).toEqual({
      replies: [{ text: "hey" }],
      usage: [],
    });
    expect(await ask(buildBot({ type: "echo" }))).toEqual({ replies: [{ text: "hello" }], usage: [] });
  });
});
