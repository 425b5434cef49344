import { afterEach, describe, expect, it } from "vitest";
import { parseBotAnswer } from "../../../src/core/brain/http-brain.js";
import { type BrainHarness, manualClock, replyTexts, startBrainHarness } from "../../support/brain-harness.js";
import { failure } from "../../support/failure.js";
import {
  type JsonTestServer,
  type RecordedRequest,
  startJsonServer,
  type TestResponse,
} from "../../support/json-test-server.js";

const TOKEN = "bot-token-0123456789";

let bot: JsonTestServer | undefined;
let harness: BrainHarness | undefined;

afterEach(async () => {
  await harness?.close();
  await bot?.close();
  harness = undefined;
  bot = undefined;
});

interface BotRequest {
  message: { text?: string };
  history: { role: string; text?: string }[];
}

/** A bot that remembers nothing itself: it answers from the history it is sent. */
function rememberingBot(request: RecordedRequest): TestResponse {
  const body = request.body as BotRequest;
  const earlier = body.history.filter((turn) => turn.role === "user").map((turn) => turn.text);
  return { status: 200, body: { text: `got "${body.message.text}" after [${earlier.join(", ")}]` } };
}

async function setup(
  handle: (request: RecordedRequest) => TestResponse = rememberingBot,
  brain: Record<string, unknown> = {},
) {
  bot = await startJsonServer(handle);
  harness = await startBrainHarness({
    brains: { bot: { type: "http", url: `${bot.origin}/bot`, token_env: "BOT_TOKEN", ...brain } },
    env: { BOT_TOKEN: TOKEN },
    clock: manualClock(Date.UTC(2025, 0, 1, 10, 0, 0)),
  });
  return { bot, harness };
}

describe("http brain", () => {
  it("POSTs the documented exchange: the message, its conversation and its history", async () => {
    const { bot, harness } = await setup();
    await harness.send("Hi, I am Ada", { conversationId: "c-42", senderId: "u-1" });
    await harness.send("Who am I?", {
      conversationId: "c-42",
      senderId: "u-1",
      mediaUrl: "https://example.com/me.jpg",
      mediaType: "image/jpeg",
    });

    const second = bot.requests[1];
    expect(second?.method).toBe("POST");
    expect(second?.path).toBe("/bot");
    expect(second?.headers.authorization).toBe(`Bearer ${TOKEN}`);
    expect(second?.headers["content-type"]).toBe("application/json");
    expect(second?.body).toEqual({
      brain: "bot",
      channel: "webhook",
      message_id: expect.any(String),
      conversation_id: "c-42",
      message: {
        sender_id: "u-1",
        text: "Who am I?",
        media_url: "https://example.com/me.jpg",
        media_type: "image/jpeg",
        conversation_id: "c-42",
      },
      history: [
        { role: "user", text: "Hi, I am Ada", at: "2025-01-01T10:00:00.000Z" },
        { role: "assistant", text: 'got "Hi, I am Ada" after []', at: "2025-01-01T10:00:00.000Z" },
      ],
    });
    expect(replyTexts(harness.replies)).toEqual([
      'got "Hi, I am Ada" after []',
      'got "Who am I?" after [Hi, I am Ada]',
    ]);
  });

  it("adds message_id and channel when the caller knows them", async () => {
    const { bot, harness } = await setup();
    await harness.ask("hello", { conversationId: "c" });
    expect(bot.requests[0]?.body).toMatchObject({ message_id: "msg-1", channel: "webhook", conversation_id: "c" });
  });

  it("never lets two conversations see each other's history, and bounds it by max_history", async () => {
    const { bot, harness } = await setup(rememberingBot, { max_history: 2 });
    await harness.send("a1", { conversationId: "A" });
    await harness.send("b1", { conversationId: "B" });
    await harness.send("a2", { conversationId: "A" });
    await harness.send("a3", { conversationId: "A" });
    await harness.send("b2", { conversationId: "B" });
    const histories = bot.requests.map((request) =>
      (request.body as BotRequest).history.map((turn) => `${turn.role}:${turn.text}`),
    );
    expect(histories).toEqual([
      [],
      [],
      ["user:a1", 'assistant:got "a1" after []'],
      ["user:a2", 'assistant:got "a2" after [a1]'],
      ["user:b1", 'assistant:got "b1" after []'],
    ]);
  });

  it("delivers several replies in order, with media, and none for an empty list or a 204", async () => {
    let answer: TestResponse = {
      status: 200,
      body: {
        replies: [
          { text: "first" },
          { media_url: "https://example.com/cat.png", media_type: "image/png" },
          { text: "third", media_url: "https://example.com/doc.pdf", media_type: null, extra: "ignored" },
        ],
      },
    };
    const { harness } = await setup(() => answer);
    await harness.send("hi");
    expect(harness.replies.map((reply) => reply.body)).toMatchObject([
      { text: "first" },
      { media_url: "https://example.com/cat.png", media_type: "image/png" },
      { text: "third", media_url: "https://example.com/doc.pdf" },
    ]);
    answer = { status: 200, body: { replies: [] } };
    await harness.send("hi");
    answer = { status: 204 };
    await harness.send("hi");
    expect(harness.replies).toHaveLength(3);
  });

  it("rejects a malformed answer as non-retryable, saying what is wrong", async () => {
    let answer: unknown;
    const { harness } = await setup(() => ({ status: 200, body: answer }));
    const cases: [unknown, string][] = [
      [["hi"], 'expected a JSON object with "replies" or "text", got an array'],
      [{ reply: "hi" }, 'expected "replies" (an array of replies) or a single reply with "text" or "media_url"'],
      [{ replies: "hi" }, '"replies" must be an array, got a string'],
      [{ replies: [{ text: 42 }] }, '"replies[0].text" must be a string, got a number'],
      [{ replies: [{ text: "ok" }, { media_url: "/relative.png" }] }, '"replies[1].media_url" must be an absolute'],
      [{ text: "x", media_url: "https://e.com/a", media_type: "png" }, '"media_type" must look like type/subtype'],
      [{ replies: [{ text: "  " }] }, '"replies[0]" has neither a non-blank "text" nor a "media_url"'],
    ];
    for (const [body, problem] of cases) {
      answer = body;
      const error = await failure(harness.ask("hi"));
      expect(error.code).toBe("brain_failed");
      expect(error.retryable).toBe(false);
      expect(error.message).toContain(`brain "bot": the bot sent an answer this brain cannot use: ${problem}`);
    }
    const outcome = await harness.run(harness.message("hi"));
    expect(outcome.kind).toBe("dead");
  });

  it("retries a 429 after its Retry-After and dead-letters a 401 with the bot's message", async () => {
    let answer: TestResponse = { status: 429, headers: { "retry-after": "3" }, body: { error: "slow down" } };
    const { harness } = await setup(() => answer);
    const limited = await harness.run(harness.message("hi"));
    expect(limited).toMatchObject({ kind: "retry", delayMs: 3_000 });
    // The 429 paused the brain for 3 s: until then a call fails without reaching the bot.
    harness.clock.advance(3_000);
    const error = await failure(harness.ask("hi"));
    expect(error.retryable).toBe(true);
    expect(error.logFields()).toMatchObject({ upstream_status: 429, retry_after_ms: 3_000 });
    expect(error.message).toContain("the bot answered 429");
    // The bot's own words may quote the message: kept apart from the message that is logged.
    expect(error.message).not.toContain("slow down");
    expect(error.upstreamMessage).toBe("slow down");

    harness.clock.advance(3_000);
    answer = { status: 401, body: { message: "bad token" } };
    const denied = await harness.run(harness.message("hi"));
    expect(denied.kind).toBe("dead");
    expect(denied.job.lastError).toMatchObject({ code: "brain_failed", retryable: false });
    expect(denied.job.lastError?.message).toContain("the bot answered 401 (check the token in BOT_TOKEN)");
    expect(denied.job.lastError?.detail).toBe("bad token");
    expect(JSON.stringify(denied)).not.toContain(TOKEN);

    answer = { status: 503, raw: "<html>maintenance</html>", headers: { "content-type": "text/html" } };
    const down = await failure(harness.ask("hi"));
    expect(down.retryable).toBe(true);
    expect(down.message).toMatch(/the bot answered 503$/);
  });

  it("judges an error answer larger than an answer may be by its status: a 502 with a huge page is retried", async () => {
    const page = `<html>${"x".repeat(5 * 1024 * 1024)}</html>`;
    let answer: TestResponse = { status: 502, raw: page, headers: { "content-type": "text/html" } };
    const { harness } = await setup(() => answer);
    const error = await failure(harness.ask("hi"));
    expect({ retryable: error.retryable, status: error.upstreamStatus }).toEqual({ retryable: true, status: 502 });
    expect(error.message).toMatch(/the bot answered 502$/);
    // A success that large is still a bad answer, not retried.
    answer = { status: 200, raw: page, headers: { "content-type": "application/json" } };
    const tooLarge = await failure(harness.ask("hi"));
    expect(tooLarge.retryable).toBe(false);
    expect(tooLarge.message).toContain("sent an answer larger than");
  });

  it("times out as a retryable error", async () => {
    const { harness } = await setup(() => ({ status: 200, body: { text: "late" }, delayMs: 2_000 }), {
      timeout_ms: 100,
    });
    const error = await failure(harness.ask("hi"));
    expect(error.retryable).toBe(true);
    expect(error.message).toContain("no answer from the bot at");
    expect(error.message).toContain("within 100 ms");
  });

  it("parses the accepted answer forms", () => {
    expect(parseBotAnswer(undefined)).toEqual({ replies: [] });
    expect(parseBotAnswer({ text: "hi" })).toEqual({ replies: [{ text: "hi" }] });
    expect(parseBotAnswer({ media_url: "https://e.com/a.png" })).toEqual({
      replies: [{ mediaUrl: "https://e.com/a.png" }],
    });
    expect(parseBotAnswer({ replies: null, text: "hi" })).toEqual({ replies: [{ text: "hi" }] });
  });
});
