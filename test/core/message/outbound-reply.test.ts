import { describe, expect, it } from "vitest";
import { resolveMapping } from "../../../src/core/config/message-fields.js";
import { type ReplyEnvelope, renderReplyBody } from "../../../src/core/message/outbound-reply.js";

const reply: ReplyEnvelope = {
  id: "r1",
  inReplyTo: "m1",
  conversationId: "c1",
  recipientId: "alice",
  brain: "echo",
  createdAt: Date.UTC(2026, 0, 2, 3, 4, 5, 6),
  sequence: 4,
};

describe("renderReplyBody", () => {
  it("renders the contract's reply with a UTC created_at", () => {
    expect(JSON.parse(renderReplyBody({ text: "hello" }, reply, resolveMapping(undefined)))).toEqual({
      message_id: "r1",
      in_reply_to: "m1",
      conversation_id: "c1",
      recipient_id: "alice",
      text: "hello",
      sequence: 4,
      brain: "echo",
      created_at: "2026-01-02T03:04:05.006Z",
    });
  });

  it("applies the mapping to conversation_id, text and media but not to fixed keys", () => {
    const keys = resolveMapping({ text: "message", conversation_id: "thread", media_url: "file", sender_id: "from" });
    const body = JSON.parse(
      renderReplyBody({ text: "hello", mediaUrl: "https://x/y.png", mediaType: "image/png" }, reply, keys),
    );
    expect(body).toEqual({
      message_id: "r1",
      in_reply_to: "m1",
      thread: "c1",
      recipient_id: "alice",
      message: "hello",
      file: "https://x/y.png",
      media_type: "image/png",
      sequence: 4,
      brain: "echo",
      created_at: "2026-01-02T03:04:05.006Z",
    });
  });

  it("leaves out text when the reply has none", () => {
    expect(
      JSON.parse(renderReplyBody({ mediaUrl: "https://x/y" }, reply, resolveMapping(undefined))),
    ).not.toHaveProperty("text");
  });
});
