import { afterEach, describe, expect, it } from "vitest";
import type { AiBinding } from "../../../src/core/brain/brain-deps.js";
import { createBrains } from "../../../src/core/brain/create-brains.js";
import { nodeUnsupportedBrains } from "../../../src/core/brain/runtime-support.js";
import { ChannelError } from "../../../src/core/channel-error.js";
import { validateConfig } from "../../../src/core/config/validate-config.js";
import { type BrainHarness, replyTexts, startBrainHarness } from "../../support/brain-harness.js";

/**
 * Stands in for the Workers runtime's `env.AI`, which exists only inside workerd; it answers
 * in Workers AI's text-generation shape, `{ response }`, and records each call.
 */
function recordingAi(answer: (messages: { role: string; content: string }[]) => unknown): AiBinding & {
  calls: { model: string; input: { messages: { role: string; content: string }[] } }[];
} {
  const calls: { model: string; input: { messages: { role: string; content: string }[] } }[] = [];
  return {
    calls,
    run(model, input) {
      const typed = input as { messages: { role: string; content: string }[] };
      calls.push({ model, input: typed });
      try {
        return Promise.resolve(answer(typed.messages));
      } catch (error) {
        return Promise.reject(error);
      }
    },
  };
}

const MODEL = "@cf/meta/llama-3.1-8b-instruct";
let harness: BrainHarness | undefined;

afterEach(async () => {
  await harness?.close();
  harness = undefined;
});

function config(brains: Record<string, unknown>, brain = "bot") {
  const result = validateConfig({
    channels: [{ type: "webhook", token_env: "T", webhook: { outbound_url: "http://127.0.0.1:1/r" } }],
    routes: [{ channel: "webhook", brain }],
    brains,
  });
  if (!result.ok) throw new Error(JSON.stringify(result.problems));
  return result.config;
}

describe("workers-ai brain", () => {
  it("runs the model with the system prompt, the history and the new message", async () => {
    const ai = recordingAi((messages) => ({ response: `heard ${messages.at(-1)?.content}` }));
    harness = await startBrainHarness({
      brains: { bot: { type: "workers-ai", model: MODEL, system_prompt: "Be brief.", max_history: 2 } },
      ai,
    });
    await harness.send("one", { conversationId: "c" });
    await harness.send("two", { conversationId: "c" });
    await harness.send(undefined, { conversationId: "c", mediaUrl: "https://e.com/x.png" });
    expect(ai.calls[1]).toEqual({
      model: MODEL,
      input: {
        messages: [
          { role: "system", content: "Be brief." },
          { role: "user", content: "one" },
          { role: "assistant", content: "heard one" },
          { role: "user", content: "two" },
        ],
      },
    });
    // Text only: the image is described; max_history 2 keeps the last two turns.
    expect(ai.calls[2]?.input.messages).toEqual([
      { role: "system", content: "Be brief." },
      { role: "user", content: "two" },
      { role: "assistant", content: "heard two" },
      { role: "user", content: "[image: https://e.com/x.png]" },
    ]);
    expect(replyTexts(harness.replies)).toEqual(["heard one", "heard two", "heard [image: https://e.com/x.png]"]);
  });

  it("retries capacity errors (pausing the brain), dead-letters an unknown model, and rejects an answer without response", async () => {
    let fail: Error | undefined = new Error("InferenceUpstreamError: 3040: Capacity temporarily exceeded");
    let answer: unknown = { response: "ok" };
    const ai = recordingAi(() => {
      if (fail !== undefined) throw fail;
      return answer;
    });
    harness = await startBrainHarness({ brains: { bot: { type: "workers-ai", model: MODEL } }, ai });
    const busy = await harness.run(harness.message("hi"));
    expect(busy.kind).toBe("retry");
    expect(busy.job.lastError?.message).toBe('brain "bot": Workers AI failed (3040)');
    expect(busy.job.lastError?.detail).toBe("InferenceUpstreamError: 3040: Capacity temporarily exceeded");

    // Error 3040 is Workers AI's rate limit: the brain is paused for everyone (1 s without a
    // Retry-After), and a call meanwhile is refused without reaching the model.
    const calls = ai.calls.length;
    const paused = await harness.run(harness.message("hi"));
    expect(paused.job.lastError?.message).toContain("is paused");
    expect(ai.calls.length).toBe(calls);
    harness.clock.advance(1_000);

    fail = new Error("AiError: 5007: No such model @cf/nope or task");
    expect((await harness.run(harness.message("hi"))).kind).toBe("dead");

    fail = undefined;
    answer = { result: "?" };
    const brain = harness.brains.get("bot");
    const error = await brain?.reply({ message: { senderId: "u", conversationId: "u", text: "hi" }, history: [] }).then(
      () => undefined,
      (thrown: unknown) => thrown,
    );
    expect(error).toBeInstanceOf(ChannelError);
    expect(error).toMatchObject({ code: "brain_failed", retryable: false });
    expect(String((error as Error).message)).toContain('expected { "response": "<text>" }');
  });

  it("cannot be created without an AI binding when routed, and is reported for Node by nodeUnsupportedBrains", () => {
    const cfg = config({ cf: { type: "workers-ai", model: MODEL }, spare: { type: "workers-ai", model: MODEL } }, "cf");
    expect(() => createBrains(cfg, { fetch, env: () => undefined })).toThrow(
      /brain "cf" is of type "workers-ai", which needs the Workers runtime and its AI binding/,
    );
    try {
      createBrains(cfg, { fetch, env: () => undefined });
    } catch (error) {
      expect(error).toMatchObject({ code: "config_invalid", retryable: false });
    }
    // Only routed brains are built: echo and cf, not the unused spare.
    expect([
      ...createBrains(cfg, { fetch, env: () => undefined, ai: recordingAi(() => ({ response: "" })) }).keys(),
    ]).toEqual(["echo", "cf"]);
    expect(nodeUnsupportedBrains(cfg)).toEqual([expect.objectContaining({ path: "brains.cf.type" })]);
    const unrouted = config({ bot: { type: "echo" }, spare: { type: "workers-ai", model: MODEL } });
    expect(() => createBrains(unrouted, { fetch, env: () => undefined })).not.toThrow();
    expect(nodeUnsupportedBrains(cfg)[0]?.message).toContain("needs the Workers runtime");
    expect(nodeUnsupportedBrains(config({ bot: { type: "echo" } }))).toEqual([]);
  });
});
