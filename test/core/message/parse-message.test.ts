import { describe, expect, it } from "vitest";
import { ChannelError } from "../../../src/core/channel-error.js";
import { resolveMapping } from "../../../src/core/config/message-fields.js";
import { parseMessage } from "../../../src/core/message/parse-message.js";

const keys = resolveMapping(undefined);

function fieldErrors(body: Record<string, unknown>, mapping = keys): { field: string; message: string }[] {
  try {
    parseMessage(body, mapping);
  } catch (error) {
    if (error instanceof ChannelError && error.code === "invalid_message") return [...(error.errors ?? [])];
    throw error;
  }
  throw new Error("expected the message to be rejected");
}

describe("parseMessage", () => {
  it("defaults the conversation id to the sender id", () => {
    expect(parseMessage({ sender_id: "alice", text: "hi" }, keys)).toEqual({
      senderId: "alice",
      conversationId: "alice",
      text: "hi",
    });
  });

  it("keeps every optional field", () => {
    const message = parseMessage(
      {
        sender_id: "a",
        sender_name: "Alice",
        text: "see",
        media_url: "https://example.com/a.png",
        media_type: "image/png",
        conversation_id: "t1",
        unknown: true,
      },
      keys,
    );
    expect(message).toEqual({
      senderId: "a",
      senderName: "Alice",
      text: "see",
      mediaUrl: "https://example.com/a.png",
      mediaType: "image/png",
      conversationId: "t1",
    });
  });

  it("accepts media without text", () => {
    expect(parseMessage({ sender_id: "a", media_url: "http://example.com/x.jpg" }, keys).mediaUrl).toBe(
      "http://example.com/x.jpg",
    );
  });

  it("turns finite numbers into id strings as String() does", () => {
    const message = parseMessage({ sender_id: 42, conversation_id: 1.5e21, text: "x" }, keys);
    expect(message).toMatchObject({ senderId: "42", conversationId: "1.5e+21" });
  });

  it("names a missing sender and missing content together", () => {
    expect(fieldErrors({})).toEqual([
      { field: "sender_id", message: "is required" },
      { field: "text", message: expect.stringContaining("content is required") },
    ]);
  });

  it("rejects blank text without media, naming the text key", () => {
    expect(fieldErrors({ sender_id: "a", text: "  \n\t" })).toEqual([
      { field: "text", message: expect.stringContaining("non-blank") },
    ]);
  });

  it.each([
    ["sender_id", ""],
    ["sender_id", true],
    ["sender_id", Number.NaN],
    ["sender_id", "x".repeat(257)],
    ["conversation_id", {}],
    ["conversation_id", ""],
    ["sender_name", 5],
    ["text", ["a"]],
    ["media_url", "ftp://example.com/x"],
    ["media_url", "not a url"],
    ["media_url", " https://example.com/a.png"],
    ["media_url", "http:example.com"],
    ["media_url", "https://example.com/a\tb.png"],
    ["media_type", "png"],
    ["media_type", 3],
    ["sender_id", "a\ud800"],
    ["conversation_id", "\udc00b"],
    ["text", "lone \ud83d surrogate"],
    ["sender_name", "\udfff"],
  ])("names %s when it is %j", (field, value) => {
    const body: Record<string, unknown> = { sender_id: "a", text: "x", [field]: value };
    expect(fieldErrors(body).map((error) => error.field)).toContain(field);
  });

  it("accepts ids of exactly 256 characters", () => {
    expect(parseMessage({ sender_id: "x".repeat(256), text: "t" }, keys).senderId).toHaveLength(256);
  });

  it("counts an id's characters, not its UTF-16 units: 256 emoji pass, 257 do not", () => {
    expect(parseMessage({ sender_id: "😀".repeat(256), text: "t" }, keys).senderId).toHaveLength(512);
    expect(fieldErrors({ sender_id: "😀".repeat(257), text: "t" })).toEqual([
      { field: "sender_id", message: "must be at most 256 characters" },
    ]);
  });

  it("keeps text whose surrogates are paired, and refuses a lone one with what is wrong", () => {
    expect(parseMessage({ sender_id: "a", text: "smile \ud83d\ude00" }, keys).text).toBe("smile 😀");
    expect(fieldErrors({ sender_id: "a", text: "x", conversation_id: "c\udc00" })).toEqual([
      { field: "conversation_id", message: expect.stringContaining("lone UTF-16 surrogate") },
    ]);
  });

  it("treats null optional fields as absent", () => {
    expect(parseMessage({ sender_id: "a", text: "t", conversation_id: null, media_url: null }, keys)).toEqual({
      senderId: "a",
      conversationId: "a",
      text: "t",
    });
  });

  it("reads mapped fields only from their mapped keys", () => {
    const mapped = resolveMapping({ text: "message", conversation_id: "thread" });
    expect(parseMessage({ sender_id: "a", message: "hi", thread: "t9", text: "ignored" }, mapped)).toEqual({
      senderId: "a",
      conversationId: "t9",
      text: "hi",
    });
  });

  it("reads a mapped key named like an object's own methods only from the body", () => {
    const mapped = resolveMapping({ text: "toString", conversation_id: "constructor" });
    expect(parseMessage({ sender_id: "a", media_url: "https://example.com/a.png" }, mapped)).toEqual({
      senderId: "a",
      conversationId: "a",
      mediaUrl: "https://example.com/a.png",
    });
    expect(parseMessage({ sender_id: "a", toString: "hi" }, mapped).text).toBe("hi");
  });

  it("names the mapped key when mapped content is missing", () => {
    const mapped = resolveMapping({ text: "message" });
    expect(fieldErrors({ sender_id: "a", text: "not read" }, mapped)).toEqual([
      { field: "message", message: expect.stringContaining('"message"') },
    ]);
  });
});
