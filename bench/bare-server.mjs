// The baseline: a hand-written `node:http` endpoint doing the same inbound work as the
// service (contract section 3) with nothing in between: Bearer in constant time, media type
// with charset, 1 MiB on Content-Length and on the bytes read, strict UTF-8 JSON parse,
// field validation, enqueue into a bounded ring, 200 with a message_id.
//
// Run as a child: `node bench/bare-server.mjs --capacity N --drain drop|hold`, secret in the
// BENCH_SECRET environment variable. It prints one JSON line with msg "listening" and url.
import { randomUUID, timingSafeEqual } from "node:crypto";
import { createServer } from "node:http";
import { parseArgs } from "node:util";

const MAX_BODY_BYTES = 1_048_576;
const MAX_ID_LENGTH = 256;
const PATH = "/webhook";
const BEARER = /^bearer +(.+)$/i;
const MEDIA_TYPE = /^[A-Za-z0-9][A-Za-z0-9!#$&^_.+-]*\/[A-Za-z0-9][A-Za-z0-9!#$&^_.+-]*(?:\s*;.*)?$/;
const utf8 = new TextDecoder("utf-8", { fatal: true });

const { values } = parseArgs({
  options: {
    capacity: { type: "string", default: "1000000" },
    // "hold" keeps every accepted message, like the service when its receiver never answers;
    // "drop" empties the ring on the next turn, like a consumer that finishes at once.
    drain: { type: "string", default: "hold" },
  },
});
const capacity = Number(values.capacity);
const secret = Buffer.from(process.env.BENCH_SECRET ?? "", "utf8");
if (secret.length === 0) {
  process.stderr.write("BENCH_SECRET is empty\n");
  process.exit(1);
}

// A fixed-size ring: enqueue and dequeue are O(1) and memory never grows past capacity.
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
function enqueue(message) {
  if (size >= capacity) return false;
  ring[(head + size) % capacity] = message;
  size += 1;
  if (values.drain === "drop" && !drainScheduled) {
    drainScheduled = true;
    setImmediate(drainAll);
  }
  return true;
}

/** Constant time in the secret's length: a wrong-length token is compared with the secret itself. */
function tokenMatches(token) {
  const presented = Buffer.from(token, "utf8");
  if (presented.length !== secret.length) {
    timingSafeEqual(secret, secret);
    return false;
  }
  return timingSafeEqual(presented, secret);
}

function isJsonContentType(contentType) {
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

function send(response, status, body, headers = {}) {
  const json = JSON.stringify(body);
  response.writeHead(status, {
    "content-type": status === 200 ? "application/json" : "application/problem+json",
    "content-length": Buffer.byteLength(json),
    ...headers,
  });
  response.end(json);
}

const problem = (response, status, code, detail, extra = {}, headers = {}) =>
  send(response, status, { type: `about:blank#${code}`, title: code, status, detail, code, ...extra }, headers);

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

function accept(response, bytes) {
  let body;
  try {
    body = JSON.parse(utf8.decode(bytes));
  } catch {
    problem(response, 400, "invalid_json", "The body is not valid JSON.");
    return;
  }
  if (body === null || typeof body !== "object" || Array.isArray(body)) {
    problem(response, 400, "invalid_json", "The body must be a JSON object at the top level.");
    return;
  }
  const { message, errors } = validate(body);
  if (errors !== undefined) {
    problem(response, 400, "invalid_message", "The message is not valid.", { errors });
    return;
  }
  const id = randomUUID();
  if (!enqueue({ id, receivedAt: Date.now(), message })) {
    problem(response, 503, "buffer_full", "The inbound buffer is full.", {}, { "retry-after": "1" });
    return;
  }
  send(response, 200, { status: "accepted", message_id: id, conversation_id: message.conversationId });
}

function handleWebhook(request, response) {
  const match = BEARER.exec(request.headers.authorization ?? "");
  if (match === null || !tokenMatches(match[1])) {
    problem(response, 401, "unauthorized", "Bearer required.", {}, { "www-authenticate": 'Bearer realm="bench"' });
    return;
  }
  if (!isJsonContentType(request.headers["content-type"])) {
    problem(response, 415, "unsupported_media_type", "application/json required.");
    return;
  }
  const declared = request.headers["content-length"];
  if (declared !== undefined && Number(declared) > MAX_BODY_BYTES) {
    problem(response, 413, "payload_too_large", "Body over 1 MiB.", {}, { connection: "close" });
    return;
  }
  const chunks = [];
  let total = 0;
  let refused = false;
  request.on("data", (chunk) => {
    if (refused) return;
    total += chunk.length;
    if (total > MAX_BODY_BYTES) {
      // Counted on the bytes read, chunked bodies too; stop reading and drop the socket.
      refused = true;
      problem(response, 413, "payload_too_large", "Body over 1 MiB.", {}, { connection: "close" });
      request.destroy();
      return;
    }
    chunks.push(chunk);
  });
  request.on("end", () => {
    if (!refused) accept(response, chunks.length === 1 ? chunks[0] : Buffer.concat(chunks, total));
  });
}

const server = createServer((request, response) => {
  const query = request.url.indexOf("?");
  const path = query === -1 ? request.url : request.url.slice(0, query);
  if (path === PATH) {
    if (request.method === "POST") handleWebhook(request, response);
    else problem(response, 405, "method_not_allowed", "POST only.", {}, { allow: "POST" });
  } else if (path === "/healthz") send(response, 200, { status: "ok" });
  else problem(response, 404, "not_found", "No endpoint here.");
});
// The same slow-client bounds as the service, so neither side has cheaper socket handling.
server.headersTimeout = 10_000;
server.requestTimeout = 30_000;
server.keepAliveTimeout = 5_000;

server.listen(0, "127.0.0.1", () => {
  const { port } = server.address();
  process.stdout.write(
    `${JSON.stringify({ level: "info", msg: "listening", url: `http://127.0.0.1:${port}${PATH}` })}\n`,
  );
});
process.on("SIGTERM", () => {
  server.close(() => process.exit(0));
  server.closeAllConnections();
});
