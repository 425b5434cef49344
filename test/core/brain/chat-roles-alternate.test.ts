import { describe, expect, it } from "vitest";
import type { BrainRequest } from "../../../src/core/brain/brain.js";
import type { ChatMessage } from "../../../src/core/brain/chat-message.js";
import { buildChatMessages, type ChatPromptOptions } from "../../../src/core/brain/chat-messages.js";
import type { ConversationTurn } from "../../../src/core/conversation/conversation-store.js";

const AT = Date.UTC(2025, 0, 1);
const IMAGE = "https://example.com/photo.png";

/** A stored turn. The texts below are padded to one length, so that each costs the same: 8 tokens. */
function turn(role: ConversationTurn["role"], text: string, mediaUrl?: string): ConversationTurn {
  return { role, text, at: AT, ...(mediaUrl === undefined ? {} : { mediaUrl }) };
}

const user = (name: string, mediaUrl?: string) => turn("user", `question ${name}`.padEnd(16, "."), mediaUrl);
const answer = (name: string) => turn("assistant", `answer ${name}`.padEnd(16, "."));
const text = (stored: ConversationTurn) => stored.text ?? "";

const NEW = "the new message";
const SYSTEM = "You are terse.";

interface Case {
  readonly name: string;
  readonly history: readonly ConversationTurn[];
  readonly options?: Partial<ChatPromptOptions>;
  /** The new message carries this image. */
  readonly newImage?: string;
  /** What follows the system prompt, as sent. */
  readonly sent: readonly ChatMessage[];
}

const [u1, u2, u3] = [user("1"), user("2"), user("3")];
const [a1, a2, a3] = [answer("1"), answer("2"), answer("3")];
const [a1b, a1c] = [answer("1b"), answer("1c")];

const CASES: readonly Case[] = [
  {
    name: "an odd max_history cuts between a message and its answer: the answer is not sent",
    history: [u1, a1, u2, a2],
    options: { maxHistory: 3 },
    sent: [
      { role: "user", content: text(u2) },
      { role: "assistant", content: text(a2) },
      { role: "user", content: NEW },
    ],
  },
  {
    name: "max_history_tokens cuts between a message and its answer: the answer is not sent",
    history: [u1, a1, u2, a2],
    // Room for three turns: a1, u2, a2.
    options: { maxHistoryTokens: 24 },
    sent: [
      { role: "user", content: text(u2) },
      { role: "assistant", content: text(a2) },
      { role: "user", content: NEW },
    ],
  },
  {
    name: "max_history_tokens cuts inside several replies: none of them is sent",
    history: [u1, a1, a1b, a1c, u2, a2],
    options: { maxHistoryTokens: 32 },
    sent: [
      { role: "user", content: text(u2) },
      { role: "assistant", content: text(a2) },
      { role: "user", content: NEW },
    ],
  },
  {
    name: "several replies to one message (an http or Rasa answer in the shared history) are one assistant turn",
    history: [u1, a1, a1b, u2, a2],
    sent: [
      { role: "user", content: text(u1) },
      { role: "assistant", content: `${text(a1)}\n\n${text(a1b)}` },
      { role: "user", content: text(u2) },
      { role: "assistant", content: text(a2) },
      { role: "user", content: NEW },
    ],
  },
  {
    name: "a message that got no reply is one user turn with the next message",
    history: [u1, u2, a2],
    sent: [
      { role: "user", content: `${text(u1)}\n\n${text(u2)}` },
      { role: "assistant", content: text(a2) },
      { role: "user", content: NEW },
    ],
  },
  {
    name: "the last message got no reply: the new message joins it",
    history: [u1, a1, u2],
    sent: [
      { role: "user", content: text(u1) },
      { role: "assistant", content: text(a1) },
      { role: "user", content: `${text(u2)}\n\n${NEW}` },
    ],
  },
  {
    name: "a history that begins with an answer (its message no longer kept) starts at the next message",
    history: [a1, u2, a2],
    sent: [
      { role: "user", content: text(u2) },
      { role: "assistant", content: text(a2) },
      { role: "user", content: NEW },
    ],
  },
  {
    name: "a message with nothing to say leaves its answer first: the answer is not sent",
    history: [turn("user", " "), a1, u2, a2, u3, a3],
    sent: [
      { role: "user", content: text(u2) },
      { role: "assistant", content: text(a2) },
      { role: "user", content: text(u3) },
      { role: "assistant", content: text(a3) },
      { role: "user", content: NEW },
    ],
  },
  {
    name: "a history of answers only sends the new message alone",
    history: [a1, a1b],
    sent: [{ role: "user", content: NEW }],
  },
  {
    name: "an unanswered image and the new message are one user turn, the image part kept",
    history: [u1, a1, user("2", IMAGE)],
    sent: [
      { role: "user", content: text(u1) },
      { role: "assistant", content: text(a1) },
      {
        role: "user",
        content: [
          { type: "text", text: text(u2) },
          { type: "image_url", image_url: { url: IMAGE } },
          { type: "text", text: NEW },
        ],
      },
    ],
  },
  {
    name: "an unanswered text and a new text with an image: the texts joined by a blank line",
    history: [u1, a1, u2],
    newImage: IMAGE,
    sent: [
      { role: "user", content: text(u1) },
      { role: "assistant", content: text(a1) },
      {
        role: "user",
        content: [
          { type: "text", text: `${text(u2)}\n\n${NEW}` },
          { type: "image_url", image_url: { url: IMAGE } },
        ],
      },
    ],
  },
];

function requestWith(history: readonly ConversationTurn[], newImage?: string): BrainRequest {
  return {
    message: {
      senderId: "u",
      conversationId: "c",
      text: NEW,
      ...(newImage === undefined ? {} : { mediaUrl: newImage }),
    },
    history,
  };
}

describe("the messages sent to a chat model alternate user and assistant, from a user turn to the new message", () => {
  it.each(CASES)("$name", ({ history, options, newImage, sent }) => {
    const messages = buildChatMessages(requestWith(history, newImage), {
      systemPrompt: SYSTEM,
      maxHistory: 20,
      imageParts: true,
      ...options,
    });
    expect(messages).toEqual([{ role: "system", content: SYSTEM }, ...sent]);
    // What a strict template (Mistral's, Gemma's) checks: user first, then turn about, user last.
    const roles = messages.slice(1).map((message) => message.role);
    expect(roles).toEqual(roles.map((_, index) => (index % 2 === 0 ? "user" : "assistant")));
    expect(roles.at(-1)).toBe("user");
  });

  it("keeps the stored history as it was", () => {
    const history = [a1, u1, u2, a2, a3];
    const before = structuredClone(history);
    buildChatMessages(requestWith(history), { maxHistory: 20, imageParts: true });
    expect(history).toEqual(before);
  });
});
