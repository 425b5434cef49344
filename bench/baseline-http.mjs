// The node:http side of the hand-written baselines (bare-server.mjs, bare-end-to-end-server.mjs,
// graphile-contender.mjs): answers as JSON or problem+json, and the webhook route's checks on
// the head and on the bytes read, before the body is handed on.
import { createServer } from "node:http";
import { bearerMatches, isJsonContentType, MAX_BODY_BYTES, PATH, problemBody } from "./baseline-checks.mjs";

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

/**
 * Serves `handleWebhook` on POST to the webhook path (405 for another method there), `/healthz`,
 * and 404 elsewhere, on a free port of 127.0.0.1, with the service's slow-client bounds so that
 * neither side has cheaper socket handling; prints the `listening` line the bench waits for.
 */
export function serveBaseline(handleWebhook) {
  const server = createServer((request, response) => {
    const query = request.url.indexOf("?");
    const path = query === -1 ? request.url : request.url.slice(0, query);
    if (path === PATH) {
      if (request.method === "POST") handleWebhook(request, response);
      else problem(response, 405, "method_not_allowed", "POST only.", {}, { allow: "POST" });
    } else if (path === "/healthz") send(response, 200, { status: "ok" });
    else problem(response, 404, "not_found", "No endpoint here.");
  });
  server.headersTimeout = 10_000;
  server.requestTimeout = 30_000;
  server.keepAliveTimeout = 5_000;
  server.listen(0, "127.0.0.1", () => {
    const { port } = server.address();
    process.stdout.write(
      `${JSON.stringify({ level: "info", msg: "listening", url: `http://127.0.0.1:${port}${PATH}` })}\n`,
    );
  });
  return server;
}
