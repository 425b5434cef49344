import { parseArgs } from "node:util";
import { Logger, run } from "graphile-worker";
import { Pool } from "undici";
import { acceptBytes } from "./baseline-checks.mjs";
import { problem, readWebhook, send, serveBaseline } from "./baseline-http.mjs";

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

const server = serveBaseline(handleWebhook);
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
