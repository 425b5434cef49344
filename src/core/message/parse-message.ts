import { ChannelError, type FieldError } from "../channel-error.js";
import type { KeyMapping } from "../config/message-fields.js";
import { isHttpUrl } from "../http/http-url.js";
import type { Mutable } from "../mutable.js";
import type { InboundMessage } from "./inbound-message.js";

/** Longest accepted `sender_id` or `conversation_id`, in characters (Unicode code points). */
export const MAX_ID_LENGTH = 256;

/**
 * A lone UTF-16 surrogate: a JSON string can carry one (`"\ud800"`) but UTF-8 cannot, so a
 * store or a receiver would get U+FFFD in its place, and an id would no longer match itself.
 */
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;
const NOT_UNICODE = "must be Unicode text (it holds a lone UTF-16 surrogate escape)";

/**
 * A media URL as every receiver reads it: the URL parser forgives what others refuse (spaces
 * around it, tabs or line breaks inside, `http:x` for `http://x/`), and the value is passed on as
 * the client sent it, so only a URL written out in full, with no whitespace, passes.
 */
const WRITTEN_OUT = /^https?:\/\/\S+$/i;

const MEDIA_TYPE = /^[A-Za-z0-9][A-Za-z0-9!#$&^_.+-]*\/[A-Za-z0-9][A-Za-z0-9!#$&^_.+-]*(?:\s*;.*)?$/;

/**
 * Reads an inbound message from a parsed JSON object through the channel's key mapping.
 * All field problems are collected, so one 400 tells the client everything to fix.
 * `null` counts as absent for optional fields, as many clients send it for "no value".
 */
export function parseMessage(body: Record<string, unknown>, keys: KeyMapping): InboundMessage {
  const errors: FieldError[] = [];
  const senderId = readId(body, keys.sender_id, true, errors);
  const conversationId = readId(body, keys.conversation_id, false, errors);
  const senderName = readString(body, keys.sender_name, errors);
  const text = readString(body, keys.text, errors);
  const mediaType = readString(body, keys.media_type, errors);
  const mediaUrl = readString(body, keys.media_url, errors);

  if (mediaUrl !== undefined && !(WRITTEN_OUT.test(mediaUrl) && isHttpUrl(mediaUrl))) {
    errors.push({ field: keys.media_url, message: "must be an absolute http: or https: URL, written out in full" });
  }
  if (mediaType !== undefined && !MEDIA_TYPE.test(mediaType)) {
    errors.push({ field: keys.media_type, message: 'must look like "type/subtype", e.g. "image/png"' });
  }
  if (!hasContent(text) && mediaUrl === undefined && !errors.some((error) => error.field === keys.text)) {
    errors.push({
      field: keys.text,
      message: `content is required: "${keys.text}" with a non-blank character, or "${keys.media_url}"`,
    });
  }
  if (errors.length > 0 || senderId === undefined) {
    const fields = [...new Set(errors.map((error) => error.field))].join(", ");
    throw new ChannelError("invalid_message", `The message is not valid: ${fields}.`, { status: 400, errors });
  }

  const message: Mutable<InboundMessage> = { senderId, conversationId: conversationId ?? senderId };
  if (senderName !== undefined) message.senderName = senderName;
  if (text !== undefined) message.text = text;
  if (mediaUrl !== undefined) message.mediaUrl = mediaUrl;
  if (mediaType !== undefined) message.mediaType = mediaType;
  return message;
}

function readId(
  body: Record<string, unknown>,
  key: string,
  required: boolean,
  errors: FieldError[],
): string | undefined {
  const value = ownValue(body, key);
  if (value === undefined || value === null) {
    if (required) errors.push({ field: key, message: "is required" });
    return undefined;
  }
  let id: string;
  if (typeof value === "string") id = value;
  else if (typeof value === "number" && Number.isFinite(value)) id = String(value);
  else {
    errors.push({ field: key, message: "must be a non-empty string (or a finite number)" });
    return undefined;
  }
  if (!hasContent(id)) {
    errors.push({ field: key, message: "must be a non-empty string" });
    return undefined;
  }
  if (LONE_SURROGATE.test(id)) {
    errors.push({ field: key, message: NOT_UNICODE });
    return undefined;
  }
  // An id is a key of every store, and Postgres cannot hold this character in text at all: the
  // message would be refused as "the state cannot be written" for ever, and a client retries.
  if (id.includes("\u0000")) {
    errors.push({ field: key, message: "must not contain the character U+0000 (NUL)" });
    return undefined;
  }
  if (id.length > MAX_ID_LENGTH && codePoints(id) > MAX_ID_LENGTH) {
    errors.push({ field: key, message: `must be at most ${MAX_ID_LENGTH} characters` });
    return undefined;
  }
  return id;
}

const BLANK = /^\s*$/;

/** Has a non-whitespace character; unlike `trim() !== ""`, copies nothing. */
function hasContent(value: string | undefined): value is string {
  return value !== undefined && !BLANK.test(value);
}

function readString(body: Record<string, unknown>, key: string, errors: FieldError[]): string | undefined {
  const value = ownValue(body, key);
  if (value === undefined || value === null) return undefined;
  if (typeof value !== "string") {
    errors.push({ field: key, message: "must be a string" });
    return undefined;
  }
  if (LONE_SURROGATE.test(value)) {
    errors.push({ field: key, message: NOT_UNICODE });
    return undefined;
  }
  return value;
}

/** The body's own value under `key`: a mapped key such as `toString` never reads what every object inherits. */
function ownValue(body: Record<string, unknown>, key: string): unknown {
  return Object.hasOwn(body, key) ? body[key] : undefined;
}

/** Characters of a string with no lone surrogate: its UTF-16 units less one per surrogate pair. */
function codePoints(value: string): number {
  let count = value.length;
  for (let index = 0; index < value.length; index += 1) {
    const unit = value.charCodeAt(index);
    if (unit >= 0xd800 && unit <= 0xdbff) count -= 1;
  }
  return count;
}
