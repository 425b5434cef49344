// The baseline: a hand-written `node:http` endpoint doing the same inbound work as the
// service (contract section 3) with nothing in between: Bearer in constant time, media type
// with charset, 1 MiB on Content-Length and on the bytes read, strict UTF-8 JSON parse,
// field validation, enqueue into a bounded ring, 200 with a message_id. The checks are in
// baseline-checks.mjs, shared with the Fastify baseline.
//
// Run as a child: `node bench/bare-server.mjs --capacity N --drain drop|hold`, secret in the
// BENCH_SECRET environment variable. It prints one JSON line with msg "listening" and url.
import { createServer } from "node:http";
import { acceptBytes, createRing, PATH, readBaselineOptions } from "./baseline-checks.mjs";
import { problem, readWebhook, send } from "./baseline-http.mjs";

const { capacity, drop, secret } = readBaselineOptions();
const enqueue = createRing(capacity, drop);

function answer(response, result) {
  if (result.status === 200) send(response, 200, result.body);
  else problem(response, result.status, result.code, result.detail, result.extra, result.headers);
}

function handleWebhook(request, response) {
  readWebhook(request, response, secret, (bytes) => answer(response, acceptBytes(bytes, enqueue)));
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
