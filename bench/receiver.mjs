// The outbound receiver, run as a child so that its work does not share an event loop with
// the load generator. It notes when each reply arrives (process.hrtime, CLOCK_MONOTONIC, so
// comparable with the parent's clock) keyed by in_reply_to, and hands the notes over on
// request through the IPC channel.
//
// Modes: "answer" replies 200 at once; "delay:<ms>" replies 200 after that many milliseconds
// (a receiver with some work to do, for the Worker's end to end); "never" reads the reply and holds the request open,
// so the service's consumer is parked and its buffer fills; "refuse" answers 503. The parent
// switches the mode through IPC before it stops a service, because the service's HTTP client
// waits for requests in flight before it closes; the profiler uses "refuse" so that the
// service does not deliver its backlog while the profile is still recording.
import { createServer } from "node:http";
import { parseArgs } from "node:util";

const { values } = parseArgs({ options: { mode: { type: "string", default: "answer" } } });
let mode = values.mode;
const nowMs = () => Number(process.hrtime.bigint() / 1000n) / 1000;

// Bounded: the parent takes the notes after every step, and a step sends at most a few
// hundred thousand messages; past this cap only the count goes on.
const MAX_NOTES = 2_000_000;
let ids = [];
let times = [];
let count = 0;
// Connections opened by the service: with a working keep-alive pool this stays small.
let connections = 0;
const held = new Set();

const server = createServer((request, response) => {
  const chunks = [];
  request.on("data", (chunk) => chunks.push(chunk));
  request.on("end", () => {
    const at = nowMs();
    count += 1;
    try {
      const reply = JSON.parse(Buffer.concat(chunks).toString("utf8"));
      if (ids.length < MAX_NOTES && typeof reply.in_reply_to === "string") {
        ids.push(reply.in_reply_to);
        times.push(at);
      }
    } catch {
      // A reply that is not JSON still counts as received; it just cannot be matched.
    }
    if (mode === "never") {
      held.add(response);
      response.on("close", () => held.delete(response));
      return;
    }
    answer(response);
  });
});
server.keepAliveTimeout = 60_000;
server.on("connection", () => {
  connections += 1;
});

function answer(response) {
  const delay = /^delay:(\d+)$/.exec(mode);
  if (delay !== null) {
    setTimeout(() => reply(response), Number(delay[1]));
    return;
  }
  reply(response);
}

function reply(response) {
  const status = mode === "refuse" ? 503 : 200;
  const body = status === 200 ? '{"ok":true}' : '{"ok":false}';
  response.writeHead(status, { "content-type": "application/json", "content-length": body.length });
  response.end(body);
}

process.on("message", (request) => {
  if (request?.type === "mode") {
    mode = request.mode;
    if (mode !== "never") {
      for (const response of held) answer(response);
      held.clear();
    }
    process.send({ type: "mode", mode: request.mode });
    return;
  }
  if (request?.type === "count") {
    // Only the count and when it was read: cheap enough to ask while a load runs.
    process.send({ type: "count", count, at: nowMs() });
    return;
  }
  if (request?.type !== "take") return;
  process.send({ type: "notes", ids, times, count, connections, held: held.size });
  ids = [];
  times = [];
});
process.on("SIGTERM", () => {
  server.close(() => process.exit(0));
  server.closeAllConnections();
});
process.on("disconnect", () => process.exit(0));

server.listen(0, "127.0.0.1", () => {
  const { port } = server.address();
  process.stdout.write(`${JSON.stringify({ msg: "listening", url: `http://127.0.0.1:${port}/replies` })}\n`);
});
