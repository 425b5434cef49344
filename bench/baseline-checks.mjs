// The inbound work both hand-written baselines do (bench/bare-server.mjs on node:http and
// bench/fastify-server.mjs on Fastify), written once so that they do exactly the same checks:
// Bearer in constant time, media type with charset, strict UTF-8 JSON, field validation as in
// the contract, and a bounded ring to enqueue into.
import { randomUUID, timingSafeEqual } from "node:crypto";
import { parseArgs } from "node:util";

export const MAX_BODY_BYTES = 1_048_576;
export const PATH = "/webhook";
const MAX_ID_LENGTH = 256;
const BEARER = /^bearer +(.+)$/i;
const MEDIA_TYPE = /^[A-Za-z0-9][A-Za-z0-9!#$&^_.+-]*\/[A-Za-z0-9][A-Za-z0-9!#$&^_.+-]*(?:\s*;.*)?$/;
const utf8 = new TextDecoder("utf-8", { fatal: true });

/**
 * Reads `--capacity N --drain drop|hold` and BENCH_SECRET (exits when it is empty). "hold"
 * keeps every accepted message, like the service when its receiver never answers; "drop"
 * empties the ring on the next turn, like a consumer that finishes at once.
 */
export function readBaselineOptions() {
  const { values } = parseArgs({
    options: {
      capacity: { type: "string", default: "1000000" },
      drain: { type: "string", default: "hold" },
    },
  });
  const secret = Buffer.from(process.env.BENCH_SECRET ?? "", "utf8");
  if (secret.length === 0) {
    process.stderr.write("BENCH_SECRET is empty\n");
    process.exit(1);
  }
  return { capacity: Number(values.capacity), drop: values.drain === "drop", secret };
}

/** A fixed-size ring: enqueue is O(1) and memory never grows past capacity. */
export function createRing(capacity, drop) {
  const ring = new Array(capacity);
  let head = 0;
  let size = 0;
  let drainScheduled = false;
  const drainAll = () => {
    drainScheduled = false;
    while (size > 0) {
      ring[head] = undefined;
      head = (head + 1) % capacity;
      size -= 1;
    }
  };
  return (message) => {
    if (size >= capacity) return false;
    ring[(head + size) % capacity] = message;
    size += 1;
    if (drop && !drainScheduled) {
      drainScheduled = true;
      setImmediate(drainAll);
    }
    return true;
  };
}

/** True when `authorization` is `Bearer <secret>`; constant time in the secret's length. */
export function bearerMatches(authorization, secret) {
  const match = BEARER.exec(authorization ?? "");
  if (match === null) return false;
  const presented = Buffer.from(match[1], "utf8");
  if (presented.length !== secret.length) {
    // A wrong-length token is compared with the secret itself.
    timingSafeEqual(secret, secret);
    return false;
  }
  return timingSafeEqual(presented, secret);
}

/** `application/json`, with no charset other than UTF-8. */
export function isJsonContentType(contentType) {
  if (contentType === undefined) return false;
  const parts = contentType.split(";");
  if (parts[0].trim().toLowerCase() !== "application/json") return false;
  for (let index = 1; index < parts.length; index += 1) {
    const parameter = parts[index];
    const equals = parameter.indexOf("=");
    if (equals === -1 || parameter.slice(0, equals).trim().toLowerCase() !== "charset") continue;
    const value = parameter
      .slice(equals + 1)
      .trim()
      .replace(/^"(.*)"$/, "$1");
    if (value.toLowerCase() !== "utf-8") return false;
  }
  return true;
}

function readId(body, key, required, errors) {
  const value = body[key];
  if (value === undefined || value === null) {
    if (required) errors.push({ field: key, message: "is required" });
    return undefined;
  }
  let id;
  if (typeof value === "string") id = value;
  else if (typeof value === "number" && Number.isFinite(value)) id = String(value);
  else {
    errors.push({ field: key, message: "must be a non-empty string (or a finite number)" });
    return undefined;
  }
  if (id.trim() === "" || id.length > MAX_ID_LENGTH) {
    errors.push({ field: key, message: `must be a non-empty string of at most ${MAX_ID_LENGTH} characters` });
    return undefined;
  }
  return id;
}

function readString(body, key, errors) {
  const value = body[key];
  if (value === undefined || value === null) return undefined;
  if (typeof value === "string") return value;
  errors.push({ field: key, message: "must be a string" });
  return undefined;
}

function isHttpUrl(value) {
  if (!URL.canParse(value)) return false;
  const { protocol } = new URL(value);
  return protocol === "http:" || protocol === "https:";
}

/** Validation as in the contract; returns the message or the list of field errors. */
function validate(body) {
  const errors = [];
  const senderId = readId(body, "sender_id", true, errors);
  const conversationId = readId(body, "conversation_id", false, errors);
  const senderName = readString(body, "sender_name", errors);
  const text = readString(body, "text", errors);
  const mediaType = readString(body, "media_type", errors);
  const mediaUrl = readString(body, "media_url", errors);
  if (mediaUrl !== undefined && !isHttpUrl(mediaUrl)) errors.push({ field: "media_url", message: "bad URL" });
  if (mediaType !== undefined && !MEDIA_TYPE.test(mediaType)) errors.push({ field: "media_type", message: "bad" });
  const hasText = text !== undefined && text.trim() !== "";
  if (!hasText && mediaUrl === undefined && !errors.some((error) => error.field === "text")) {
    errors.push({ field: "text", message: "content is required" });
  }
  if (errors.length > 0) return { errors };
  return { message: { senderId, conversationId: conversationId ?? senderId, senderName, text, mediaUrl, mediaType } };
}

/** A problem+json body (RFC 9457) as both baselines send it. */
export const problemBody = (status, code, detail, extra = {}) => ({
  type: `about:blank#${code}`,
  title: code,
  status,
  detail,
  code,
  ...extra,
});

/**
 * Strict UTF-8 JSON, an object at the top level, then the contract's validation and the
 * enqueue. Returns { status: 200, body } or { status, code, detail, extra?, headers? }.
 */
export function acceptBytes(bytes, enqueue) {
  let body;
  try {
    body = parseStrictJson(bytes);
  } catch {
    return { status: 400, code: "invalid_json", detail: "The body is not valid JSON." };
  }
  return acceptObject(body, enqueue);
}

/** acceptBytes after the parse (Fastify's content-type parser does the parse). */
export function acceptObject(body, enqueue) {
  if (body === null || typeof body !== "object" || Array.isArray(body)) {
    return { status: 400, code: "invalid_json", detail: "The body must be a JSON object at the top level." };
  }
  const { message, errors } = validate(body);
  if (errors !== undefined) {
    return { status: 400, code: "invalid_message", detail: "The message is not valid.", extra: { errors } };
  }
  const id = randomUUID();
  if (!enqueue({ id, receivedAt: Date.now(), message })) {
    return { status: 503, code: "buffer_full", detail: "The inbound buffer is full.", headers: { "retry-after": "1" } };
  }
  return { status: 200, body: { status: "accepted", message_id: id, conversation_id: message.conversationId } };
}

/** Parses strict UTF-8 JSON; throws on bad bytes or bad JSON. */
export const parseStrictJson = (bytes) => JSON.parse(utf8.decode(bytes));
