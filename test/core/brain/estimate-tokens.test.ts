import { describe, expect, it } from "vitest";
import type { BrainRequest } from "../../../src/core/brain/brain.js";
import { buildChatMessages, chatMessageTokens } from "../../../src/core/brain/chat-messages.js";
import {
  estimateMessageTokens,
  MESSAGE_OVERHEAD_TOKENS,
  newestWithinTokens,
} from "../../../src/core/brain/estimate-tokens.js";
import { httpBrainRequestBody } from "../../../src/core/brain/http-brain.js";
import type { ConversationTurn } from "../../../src/core/conversation/conversation-store.js";

const AT = Date.UTC(2025, 0, 1);

/** A request whose history is `texts`, alternating user and assistant, oldest first. */
function requestWith(texts: readonly string[], text = "new"): BrainRequest {
  const history: ConversationTurn[] = texts.map((turn, index) => ({
    role: index % 2 === 0 ? "user" : "assistant",
    text: turn,
    at: AT + index,
  }));
  return { message: { senderId: "u", conversationId: "c", text }, history };
}

describe("estimateMessageTokens: UTF-8 bytes / 4, rounded up, plus a per-message overhead", () => {
  it("counts ASCII at four characters a token", () => {
    expect(MESSAGE_OVERHEAD_TOKENS).toBe(4);
    expect(estimateMessageTokens([])).toBe(4);
    expect(estimateMessageTokens([""])).toBe(4);
    expect(estimateMessageTokens(["abcd"])).toBe(5);
    expect(estimateMessageTokens(["abcde"])).toBe(6);
    expect(estimateMessageTokens(["x".repeat(400)])).toBe(104);
  });

  it("counts bytes, so that non-Latin text is not undercounted", () => {
    expect(estimateMessageTokens(["é"])).toBe(5); // 2 bytes
    expect(estimateMessageTokens(["日本語です"])).toBe(4 + 4); // 15 bytes
    expect(estimateMessageTokens(["😀😀"])).toBe(2 + 4); // two 4-byte code points
    expect(estimateMessageTokens(["\ud800"])).toBe(1 + 4); // a lone surrogate: U+FFFD, 3 bytes
  });

  it("agrees with TextEncoder on mixed text, and sums the parts of a message", () => {
    const text = "Grüße, Ελλάδα, Москва, 東京 🚀 and \ud83d alone";
    const bytes = new TextEncoder().encode(text).length;
    expect(estimateMessageTokens([text])).toBe(Math.ceil(bytes / 4) + 4);
    expect(estimateMessageTokens(["ab", undefined, "cd"])).toBe(1 + 4);
  });
});

describe("newestWithinTokens: the oldest dropped first, never a gap", () => {
  const cost = (item: number) => item;

  it("keeps every item without a bound", () => {
    const items = [5, 5, 5];
    expect(newestWithinTokens(items, undefined, cost)).toBe(items);
  });

  it("keeps the newest items that fit, stopping at the first that does not", () => {
    const items = [1, 10, 1, 1];
    expect(newestWithinTokens(items, 13, cost)).toEqual([1, 10, 1, 1]);
    expect(newestWithinTokens(items, 12, cost)).toEqual([10, 1, 1]);
    // Room for the oldest (1) but not for 10 before it: the history ends at the gap.
    expect(newestWithinTokens(items, 11, cost)).toEqual([1, 1]);
    expect(newestWithinTokens(items, 1, cost)).toEqual([1]);
    expect(newestWithinTokens([7], 6, cost)).toEqual([]);
    expect(newestWithinTokens([], 6, cost)).toEqual([]);
  });
});

describe("max_history_tokens where the history is shaped", () => {
  // 16 ASCII characters: 4 tokens of text + 4 of overhead = 8 each.
  const turns = ["a".repeat(16), "b".repeat(16), "c".repeat(16), "d".repeat(16)];

  it("chat messages: the history within the bound; the system prompt and the new message always", () => {
    const options = { systemPrompt: "S".repeat(4000), maxHistory: 20, imageParts: true };
    const contents = (maxHistoryTokens: number | undefined) =>
      buildChatMessages(requestWith(turns, "N".repeat(4000)), { ...options, maxHistoryTokens }).map((message) =>
        typeof message.content === "string" ? message.content.slice(0, 1) : "parts",
      );
    expect(contents(undefined)).toEqual(["S", "a", "b", "c", "d", "N"]);
    expect(contents(32)).toEqual(["S", "a", "b", "c", "d", "N"]);
    // "b" fits, but it answers "a", which does not: an answer is never sent without its message.
    expect(contents(31)).toEqual(["S", "c", "d", "N"]);
    expect(contents(16)).toEqual(["S", "c", "d", "N"]);
    expect(contents(15)).toEqual(["S", "N"]);
    expect(contents(7)).toEqual(["S", "N"]);
  });

  it("chat messages: max_history applies first, then the token bound", () => {
    const messages = buildChatMessages(requestWith(turns), { maxHistory: 2, maxHistoryTokens: 1000, imageParts: true });
    expect(messages.map((message) => message.content)).toEqual([turns[2], turns[3], "new"]);
  });

  it("chat messages: estimated as sent, a described medium included and an image part by its URL", () => {
    expect(chatMessageTokens({ role: "user", content: "abcd" })).toBe(5);
    const url = "https://example.com/a.png"; // 25 bytes
    expect(
      chatMessageTokens({
        role: "user",
        content: [
          { type: "text", text: "abc" },
          { type: "image_url", image_url: { url } },
        ],
      }),
    ).toBe(Math.ceil(28 / 4) + 4);
    const request: BrainRequest = {
      message: { senderId: "u", conversationId: "c", text: "new" },
      history: [
        { role: "user", mediaUrl: "https://example.com/a.ogg", mediaType: "audio/ogg", at: AT },
        { role: "assistant", text: "ok", at: AT },
      ],
    };
    const [described] = buildChatMessages(request, { maxHistory: 5, imageParts: false });
    const content = typeof described?.content === "string" ? described.content : "";
    expect(content).toBe("[attachment (audio/ogg): https://example.com/a.ogg]");
    const cost = estimateMessageTokens([content]) + estimateMessageTokens(["ok"]);
    expect(buildChatMessages(request, { maxHistory: 5, maxHistoryTokens: cost, imageParts: false })).toHaveLength(3);
    expect(buildChatMessages(request, { maxHistory: 5, maxHistoryTokens: cost - 1, imageParts: false })).toHaveLength(
      1,
    );
  });

  it("http brain: the history within the bound, each turn by its text, media_url and media_type", () => {
    const texts = (maxHistoryTokens?: number) =>
      httpBrainRequestBody("bot", requestWith(turns), 20, maxHistoryTokens).history.map((turn) => turn.text);
    expect(texts()).toEqual(turns);
    expect(texts(24)).toEqual(turns.slice(1));
    expect(texts(7)).toEqual([]);
    const body = httpBrainRequestBody("bot", requestWith(turns), 20, 7);
    expect(body.message.text).toBe("new");

    const media: BrainRequest = {
      message: { senderId: "u", conversationId: "c", text: "new" },
      history: [{ role: "user", text: "abcd", mediaUrl: "https://e.com/x.png", mediaType: "image/png", at: AT }],
    };
    // "abcd" + "https://e.com/x.png" + "image/png": 4 + 19 + 9 = 32 bytes, 8 tokens, + 4.
    expect(httpBrainRequestBody("bot", media, 20, 12).history).toHaveLength(1);
    expect(httpBrainRequestBody("bot", media, 20, 11).history).toHaveLength(0);
  });
});
