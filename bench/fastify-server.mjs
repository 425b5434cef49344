// A second baseline: the endpoint as a Fastify 5 user would write it, doing the same checks
// as bench/bare-server.mjs (baseline-checks.mjs): Bearer and media type in an onRequest hook,
// the 1 MiB limit through Fastify's bodyLimit (Content-Length and the bytes read), strict
// UTF-8 JSON in a content-type parser, validation and enqueue in the handler, and a response
// schema so that Fastify serializes the 200 with fast-json-stringify.
//
// Run as a child like bare-server.mjs: `node bench/fastify-server.mjs --capacity N
// --drain drop|hold`, secret in BENCH_SECRET; it prints one JSON "listening" line with url.
import Fastify from "fastify";
import {
  acceptObject,
  bearerMatches,
  createRing,
  isJsonContentType,
  MAX_BODY_BYTES,
  PATH,
  parseStrictJson,
  problemBody,
  readBaselineOptions,
} from "./baseline-checks.mjs";

const { capacity, drop, secret } = readBaselineOptions();
const enqueue = createRing(capacity, drop);

const app = Fastify({
  logger: false,
  bodyLimit: MAX_BODY_BYTES,
  // The same slow-client bounds as the service and the bare server.
  requestTimeout: 30_000,
  keepAliveTimeout: 5_000,
});

const problem = (reply, status, code, detail, extra = {}, headers = {}) =>
  reply
    .code(status)
    .headers(headers)
    .type("application/problem+json")
    .send(problemBody(status, code, detail, extra));

app.removeContentTypeParser("application/json");
app.addContentTypeParser("application/json", { parseAs: "buffer" }, (_request, body, done) => {
  try {
    done(null, parseStrictJson(body));
  } catch {
    const error = new Error("The body is not valid JSON.");
    error.statusCode = 400;
    error.code = "invalid_json";
    done(error, undefined);
  }
});

app.setErrorHandler((error, _request, reply) => {
  const status = error.statusCode ?? 500;
  if (status === 413) {
    problem(reply, 413, "payload_too_large", "Body over 1 MiB.", {}, { connection: "close" });
    return;
  }
  const code = { 400: "invalid_json", 415: "unsupported_media_type" }[status] ?? "internal_error";
  problem(reply, status, code, error.message);
});
app.setNotFoundHandler((_request, reply) => problem(reply, 404, "not_found", "No endpoint here."));

app.post(
  PATH,
  {
    onRequest(request, reply, done) {
      if (!bearerMatches(request.headers.authorization, secret)) {
        problem(reply, 401, "unauthorized", "Bearer required.", {}, { "www-authenticate": 'Bearer realm="bench"' });
        return;
      }
      if (!isJsonContentType(request.headers["content-type"])) {
        problem(reply, 415, "unsupported_media_type", "application/json required.");
        return;
      }
      done();
    },
    schema: {
      response: {
        200: {
          type: "object",
          properties: {
            status: { type: "string" },
            message_id: { type: "string" },
            conversation_id: { type: "string" },
          },
        },
      },
    },
  },
  (request, reply) => {
    const result = acceptObject(request.body, enqueue);
    if (result.status === 200) reply.send(result.body);
    else problem(reply, result.status, result.code, result.detail, result.extra, result.headers);
  },
);
app.route({
  method: ["GET", "HEAD", "PUT", "PATCH", "DELETE", "OPTIONS"],
  url: PATH,
  handler: (_request, reply) => problem(reply, 405, "method_not_allowed", "POST only.", {}, { allow: "POST" }),
});
app.get("/healthz", (_request, reply) => reply.send({ status: "ok" }));

await app.listen({ port: 0, host: "127.0.0.1" });
app.server.headersTimeout = 10_000;
const { port } = app.server.address();
process.stdout.write(
  `${JSON.stringify({ level: "info", msg: "listening", url: `http://127.0.0.1:${port}${PATH}` })}\n`,
);
process.on("SIGTERM", () => {
  app.server.closeAllConnections();
  app.close().then(
    () => process.exit(0),
    () => process.exit(1),
  );
});
