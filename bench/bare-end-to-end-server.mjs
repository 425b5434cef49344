import { parseArgs } from "node:util";
import { Pool } from "undici";
import { acceptBytes } from "./baseline-checks.mjs";
import { problem, readWebhook, send, serveBaseline } from "./baseline-http.mjs";

const { values } = parseArgs({
  options: {
    outbound: { type: "string" },
    capacity: { type: "string", default: "1000" },
  },
});
const secret = Buffer.from(process.env.BENCH_SECRET ?? "", "utf8");
if (secret.length === 0 || values.outbound === undefined) {
  process.stderr.write("usage: BENCH_SECRET=... node bench/bare-end-to-end-server.mjs --outbound <url>\n");
  process.exit(1);
}
const capacity = Number(values.capacity);
const outbound = new URL(values.outbound);
const pool = new Pool(outbound.origin, { connections: 128, keepAliveTimeout: 4_000 });
const outboundPath = `${outbound.pathname}${outbound.search}`;
const RETRY_MS = 200;
const TIMEOUT_MS = 10_000;

// conversation id → { queue, head, sequence, busy }; a message leaves its lane once posted.
const lanes = new Map();
let unfinished = 0;

function enqueue(accepted) {
  if (unfinished >= capacity) return false;
  unfinished += 1;
  const key = accepted.message.conversationId;
  let lane = lanes.get(key);
  if (lane === undefined) {
    lane = { queue: [], head: 0, sequence: 0, busy: false };
    lanes.set(key, lane);
  }
  lane.queue.push(accepted);
  if (!lane.busy) deliverNext(lane);
  return true;
}

function deliverNext(lane) {
  if (lane.head === lane.queue.length) {
    lane.busy = false;
    lane.queue.length = 0;
    lane.head = 0;
    return;
  }
  lane.busy = true;
  const accepted = lane.queue[lane.head];
  lane.sequence += 1;
  const body = JSON.stringify({
    message_id: `${accepted.id}-r`,
    in_reply_to: accepted.id,
    conversation_id: accepted.message.conversationId,
    recipient_id: accepted.message.senderId,
    text: accepted.message.text,
    sequence: lane.sequence,
    brain: "echo",
    created_at: new Date().toISOString(),
  });
  post(body, (ok) => {
    if (!ok) {
      lane.sequence -= 1;
      setTimeout(() => deliverNext(lane), RETRY_MS);
      return;
    }
    lane.queue[lane.head] = undefined;
    lane.head += 1;
    unfinished -= 1;
    deliverNext(lane);
  });
}

/** POSTs `body` and calls `done(ok)` once: a 2xx answer, or anything else (error, timeout, status). */
function post(body, done) {
  let settled = false;
  let status = 0;
  const settle = (ok) => {
    if (settled) return;
    settled = true;
    clearTimeout(timer);
    done(ok);
  };
  const timer = setTimeout(() => settle(false), TIMEOUT_MS);
  pool.dispatch(
    {
      method: "POST",
      path: outboundPath,
      body,
      headers: { "content-type": "application/json", "webhook-id": "bench" },
    },
    {
      onRequestStart() {},
      onResponseStart(_controller, statusCode) {
        status = statusCode;
      },
      onResponseData() {},
      onResponseEnd() {
        settle(status >= 200 && status < 300);
      },
      onResponseError() {
        settle(false);
      },
    },
  );
}

function handleWebhook(request, response) {
  readWebhook(request, response, secret, (bytes) => {
    const result = acceptBytes(bytes, enqueue);
    if (result.status === 200) send(response, 200, result.body);
    else problem(response, result.status, result.code, result.detail, result.extra, result.headers);
  });
}

const server = serveBaseline(handleWebhook);
process.on("SIGTERM", () => {
  server.close();
  server.closeAllConnections();
  pool.destroy().finally(() => process.exit(0));
});
