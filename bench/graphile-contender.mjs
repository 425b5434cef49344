// The Postgres contender of the saturation phase: what a user would build instead of
// webhook-channel on Postgres. A `node:http` endpoint with the same inbound checks as the bare
// server (baseline-checks.mjs) adds one graphile-worker job per message, with `queueName` set to
// the conversation id (a named queue runs its jobs one at a time, in order: the per-conversation
// order the service keeps), and answers 200 once the job is committed. A graphile-worker runner
// in the same process runs the jobs: its task POSTs the "echo" reply to `--outbound` through a
// keep-alive undici Pool, as the service posts, and a failed POST throws, so that
// graphile-worker retries it.
//
// Settings: graphile-worker's own performance page (worker.graphile.org/docs/performance):
// concurrentJobs 24, maxPoolSize 25, completeJobBatchDelay and failJobBatchDelay 0, prepared
// statements on (the default), new jobs announced by LISTEN/NOTIFY (always on; pollInterval,
// left at its default, only finds jobs scheduled for later). Its localQueue is left off:
// in 0.17.3 it hands jobs of one named queue to several workers at once (graphile/worker
// issue 621), which would break the order per conversation. Like the service with its default
// buffer_capacity, it refuses with 503 `buffer_full` while `--capacity` jobs are unfinished, so
// that both meet an overload on the same terms instead of this one queueing without bound. The
// per-job "Completed task" log lines at info are dropped (a throughput-minded user turns them
// off); warnings and errors go to stderr.
//
// Run as a child: `node bench/graphile-contender.mjs --outbound <url> [--capacity N]`, with
// BENCH_SECRET and BENCH_DATABASE_URL (an empty database: the runner migrates it). It prints one
// JSON line with msg "listening" and url.
import { createServer } from "node:http";
import { parseArgs } from "node:util";
import { Logger, run } from "graphile-worker";
import { Pool } from "undici";
import { acceptBytes, PATH } from "./baseline-checks.mjs";
import { problem, readWebhook, send } from "./baseline-http.mjs";

const { values } = parseArgs({
  options: {
    outbound: { type: "string" },
    capacity: { type: "string", default: "1000" },
    // For experiments (`--concurrency N`); the bench runs the documented setting.
    concurrency: { type: "string", default: "24" },
    // For experiments: no queueName, so no order per conversation (graphile-worker's fast path).
    "no-queues": { type: "boolean", default: false },
  },
});
const secret = Buffer.from(process.env.BENCH_SECRET ?? "", "utf8");
const connectionString = process.env.BENCH_DATABASE_URL;
if (secret.length === 0 || connectionString === undefined || values.outbound === undefined) {
  process.stderr.write(
    "usage: BENCH_SECRET=... BENCH_DATABASE_URL=... node bench/graphile-contender.mjs --outbound <url>\n",
  );
  process.exit(1);
}
const capacity = Number(values.capacity);
const outbound = new URL(values.outbound);
const pool = new Pool(outbound.origin, { connections: 128, keepAliveTimeout: 4_000 });
const outboundPath = `${outbound.pathname}${outbound.search}`;

const logger = new Logger(() => (level, message) => {
  if (level === "warning" || level === "error") process.stderr.write(`graphile-worker ${level}: ${message}\n`);
});

// Jobs added and not yet finished, counted here rather than in the database: a count query per
// request would cost the contender more than the admission check costs the service.
let unfinished = 0;

const runner = await run({
  noHandleSignals: true,
  logger,
  preset: {
    worker: {
      connectionString,
      concurrentJobs: Number(values.concurrency),
      maxPoolSize: Math.max(10, Number(values.concurrency) + 1),
      preparedStatements: true,
      completeJobBatchDelay: 0,
      failJobBatchDelay: 0,
    },
  },
  taskList: {
    async reply(payload) {
      const { statusCode, body } = await pool.request({
        method: "POST",
        path: outboundPath,
        headers: { "content-type": "application/json", "webhook-id": `${payload.id}-r` },
        body: JSON.stringify({
          message_id: `${payload.id}-r`,
          in_reply_to: payload.id,
          conversation_id: payload.conversationId,
          recipient_id: payload.senderId,
          text: payload.text,
          brain: "echo",
          created_at: new Date().toISOString(),
        }),
      });
      await body.dump();
      if (statusCode < 200 || statusCode >= 300) throw new Error(`receiver answered ${statusCode}`);
    },
  },
});
// Finished: delivered, or failed for good; a failed attempt that will be retried is still unfinished.
const finished = () => {
  unfinished -= 1;
};
runner.events.on("job:success", finished);
runner.events.on("job:failed", finished);

/** The job of an accepted message; the 200 waits for add_job's commit, as durability requires. */
async function addJob(accepted, response, result) {
  try {
    await runner.addJob(
      "reply",
      {
        id: accepted.id,
        conversationId: accepted.message.conversationId,
        senderId: accepted.message.senderId,
        text: accepted.message.text,
      },
      values["no-queues"] ? {} : { queueName: accepted.message.conversationId },
    );
    send(response, 200, result.body);
  } catch (error) {
    unfinished -= 1;
    problem(response, 503, "buffer_full", `The job could not be added: ${error.message}`);
  }
}

function handleWebhook(request, response) {
  readWebhook(request, response, secret, (bytes) => {
    let accepted;
    const result = acceptBytes(bytes, (message) => {
      if (unfinished >= capacity) return false;
      unfinished += 1;
      accepted = message;
      return true;
    });
    // addJob answers the request itself, error or not.
    if (result.status === 200) void addJob(accepted, response, result);
    else problem(response, result.status, result.code, result.detail, result.extra, result.headers);
  });
}

const server = createServer((request, response) => {
  const query = request.url.indexOf("?");
  const path = query === -1 ? request.url : request.url.slice(0, query);
  if (path === PATH && request.method === "POST") handleWebhook(request, response);
  else if (path === "/healthz") send(response, 200, { status: "ok" });
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
process.on("SIGTERM", async () => {
  server.close();
  server.closeAllConnections();
  // Jobs still queued stay in the database (the bench drops it); running ones finish first.
  try {
    await runner.stop();
    await pool.destroy();
  } finally {
    process.exit(0);
  }
});
