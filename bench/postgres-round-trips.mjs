// Round trips to Postgres on a message's critical path, counted from outside the service: the
// replica reaches its database through a TCP relay in the bench that reads the Postgres
// frontend protocol and notes the time of every Query ('Q') and every Sync ('S') the replica
// sends. Each is one wait for the server's answer: node-postgres sends a query (simple, or
// Parse/Bind/Execute/Sync for one with parameters) only after the previous one's ReadyForQuery,
// so one 'Q' or 'S' is one round trip, whatever the statement.
//
// Messages are then sent one at a time to an otherwise idle replica, each after the previous
// one's reply has arrived and a pause, and for each the round trips are counted in two spans on
// one monotonic clock: from the send to the client reading its 200 (the accept path), and from
// that 200 to the reply's arrival at the receiver (the delivery path). Round trips of timers
// that happen to fall into a span are counted too; the median over the messages leaves them out.
import { connect, createServer } from "node:net";
import { messageBody, messageHeaders } from "./message.mjs";
import { nowMs } from "./paced-sender.mjs";
import { buildRequest, createRawClient } from "./raw-client.mjs";

const SSL_REQUEST = 80877103;
const GSSENC_REQUEST = 80877104;
const QUERY = 0x51; // 'Q'
const SYNC = 0x53; // 'S'
const PAUSE_MS = 40;
const REPLY_TIMEOUT_MS = 5_000;

/**
 * Reads the frontend side of one connection and calls `noted()` for each Query and Sync. The
 * first messages (startup, an SSL or GSS request) have no type byte; every later one is a type
 * byte and a 32-bit length that counts itself but not the type.
 */
function frontendReader(noted) {
  let startup = true;
  let header = Buffer.alloc(0);
  let skip = 0;
  return (chunk) => {
    let offset = 0;
    while (offset < chunk.length) {
      if (skip > 0) {
        const step = Math.min(skip, chunk.length - offset);
        skip -= step;
        offset += step;
        continue;
      }
      const size = startup ? 8 : 5;
      const take = Math.min(size - header.length, chunk.length - offset);
      header = Buffer.concat([header, chunk.subarray(offset, offset + take)]);
      offset += take;
      if (header.length < size) break;
      if (startup) {
        const code = header.readInt32BE(4);
        skip = header.readInt32BE(0) - 8;
        startup = code === SSL_REQUEST || code === GSSENC_REQUEST;
      } else {
        if (header[0] === QUERY || header[0] === SYNC) noted();
        skip = header.readInt32BE(1) - 4;
      }
      header = Buffer.alloc(0);
    }
  };
}

/** A relay on a free loopback port to `port`; `times` holds when each round trip began (ms). */
export async function startCountingRelay(port) {
  const times = [];
  const sockets = new Set();
  const server = createServer((client) => {
    const upstream = connect({ host: "127.0.0.1", port, noDelay: true });
    client.setNoDelay(true);
    sockets.add(client);
    sockets.add(upstream);
    const read = frontendReader(() => times.push(nowMs()));
    client.on("data", (chunk) => {
      read(chunk);
      upstream.write(chunk);
    });
    upstream.on("data", (chunk) => client.write(chunk));
    const end = () => {
      client.destroy();
      upstream.destroy();
      sockets.delete(client);
      sockets.delete(upstream);
    };
    client.on("close", end);
    upstream.on("close", end);
    client.on("error", end);
    upstream.on("error", end);
  });
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    port: server.address().port,
    times,
    /** Round trips that began in [from, to). */
    between: (from, to) => times.filter((at) => at >= from && at < to).length,
    async close() {
      for (const socket of sockets) socket.destroy();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

const median = (values) => {
  if (values.length === 0) return null;
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
};
const mean = (values) => (values.length === 0 ? null : values.reduce((sum, value) => sum + value, 0) / values.length);

/** Sends one request through `client`; resolves to { status, body, at } once it is answered. */
const sendOne = (client, request) =>
  new Promise((resolve, reject) => {
    client.send(request, (error, status, body) => (error ? reject(error) : resolve({ status, body, at: nowMs() })));
  });

/** Polls the receiver until the reply to `messageId` has arrived; its arrival time (ms) or null. */
async function replyArrival(receiver, messageId) {
  const giveUpAt = nowMs() + REPLY_TIMEOUT_MS;
  while (nowMs() < giveUpAt) {
    const { arrivals } = await receiver.take();
    const at = arrivals.get(messageId);
    if (at !== undefined) return at;
    await new Promise((resolve) => setTimeout(resolve, 2));
  }
  return null;
}

/**
 * Counts the round trips of `messages` messages sent one at a time to the service at `url`
 * (whose database connections go through `relay`), after `warmup` uncounted ones. Returns the
 * median and mean per span, and the round trips per second of the idle replica (measured in
 * a pause without messages), which says how much timer traffic the spans may hold. With
 * `sameConversation` every message is of one conversation, which the replica runs from the
 * first on (the pause is far shorter than a lease); else each is of a conversation new to it.
 */
export async function countRoundTrips({
  url,
  relay,
  secret,
  receiver,
  messages,
  warmup = 5,
  sameConversation = false,
}) {
  const client = createRawClient(url, 1);
  const headers = messageHeaders(secret);
  const accept = [];
  const delivery = [];
  let lost = 0;
  try {
    const idleFrom = nowMs();
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    const idlePerSecond = relay.between(idleFrom, nowMs()) / ((nowMs() - idleFrom) / 1000);
    for (let index = 0; index < warmup + messages; index += 1) {
      await receiver.take();
      const conversation = sameConversation ? "conv-held" : `conv-${index % 1000}`;
      const request = buildRequest(url, headers, messageBody(conversation));
      const sentAt = nowMs();
      const answer = await sendOne(client, request);
      if (answer.status !== 200) throw new Error(`the probe's message was answered ${answer.status}: ${answer.body}`);
      const messageId = JSON.parse(answer.body).message_id;
      const arrivedAt = await replyArrival(receiver, messageId);
      if (index >= warmup) {
        if (arrivedAt === null) lost += 1;
        else {
          accept.push(relay.between(sentAt, answer.at));
          delivery.push(relay.between(answer.at, arrivedAt));
        }
      }
      await new Promise((resolve) => setTimeout(resolve, PAUSE_MS));
    }
    const total = accept.map((count, index) => count + delivery[index]);
    return {
      messages: accept.length,
      lost,
      idleRoundTripsPerSecond: idlePerSecond,
      accept: { median: median(accept), mean: mean(accept) },
      delivery: { median: median(delivery), mean: mean(delivery) },
      total: { median: median(total), mean: mean(total) },
    };
  } finally {
    await client.close();
  }
}
