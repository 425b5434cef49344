// The node:http side of the hand-written baselines (bare-server.mjs, bare-end-to-end-server.mjs,
// graphile-contender.mjs): answers as JSON or problem+json, and the webhook route's checks on
// the head and on the bytes read, before the body is handed on.
import { bearerMatches, isJsonContentType, MAX_BODY_BYTES, problemBody } from "./baseline-checks.mjs";

/** Writes `body` as JSON: `application/json` for a 200, `application/problem+json` otherwise. */
export function send(response, status, body, headers = {}) {
  const json = JSON.stringify(body);
  response.writeHead(status, {
    "content-type": status === 200 ? "application/json" : "application/problem+json",
    "content-length": Buffer.byteLength(json),
    ...headers,
  });
  response.end(json);
}

/** Answers a refusal with its problem body. */
export const problem = (response, status, code, detail, extra = {}, headers = {}) =>
  send(response, status, problemBody(status, code, detail, extra), headers);

/**
 * The webhook route's checks before the body (Bearer, media type, declared length), then the
 * body read within 1 MiB (counted on the bytes read, chunked bodies too); `accept(bytes)` gets the
 * whole body. Every refusal is answered here.
 */
export function readWebhook(request, response, secret, accept) {
  if (!bearerMatches(request.headers.authorization, secret)) {
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
      // Stop reading and drop the socket.
      refused = true;
      problem(response, 413, "payload_too_large", "Body over 1 MiB.", {}, { connection: "close" });
      request.destroy();
      return;
    }
    chunks.push(chunk);
  });
  request.on("end", () => {
    if (!refused) accept(chunks.length === 1 ? chunks[0] : Buffer.concat(chunks, total));
  });
}
