// An open-loop sender: messages leave at the offered rate whether or not earlier ones have
// been answered (a closed loop would slow down with the server and hide its queueing).
// Node timers tick at about 1 ms, so each tick sends what is due since the last one: at
// 5,000/s that is bursts of about 5, which the numbers include.
import { messageBody, messageHeaders } from "./message.mjs";
import { buildRequest, createRawClient } from "./raw-client.mjs";

/** Milliseconds on the monotonic clock that bench/receiver.mjs uses too (CLOCK_MONOTONIC). */
export const nowMs = () => Number(process.hrtime.bigint() / 1000n) / 1000;

const TICK_MS = 1;
const ID_KEY = '"message_id":"';
const CODE = /"code":"([^"]*)"/;

/** The message_id of a 200 body, found without a full JSON parse (the sender's CPU is the service's loss). */
function messageIdOf(body) {
  const start = body.indexOf(ID_KEY);
  if (start === -1) return JSON.parse(body).message_id;
  const from = start + ID_KEY.length;
  return body.slice(from, body.indexOf('"', from));
}
const SETTLE_TIMEOUT_MS = 15_000;

/** Keep-alive connections to the server under test (bench/raw-client.mjs); close when done. */
export const createSenderPool = (url, connections = 64) => createRawClient(url, connections);

/**
 * Sends `rate` messages per second for `seconds` to `url` through `pool`, spreading them
 * over `conversations` conversations. At most `maxInFlight` requests are outstanding; a
 * message due beyond that is counted as `skipped` (the client, not the server, fell behind).
 * Resolves once every request has been answered, failed, or SETTLE_TIMEOUT_MS has passed.
 *
 * Returns `accepted`: message_id → the time its 200 was read (ms, monotonic), the status
 * counts, the refusals by status and problem `code` ("503 buffer_full"), the rate actually
 * achieved, when the first and the last message left (`startedAt`, `endedAt`), and each 200's
 * latency from the send (ms, sorted).
 *
 * `targets` ([{ pool, url }], instead of `pool` and `url`) spreads the messages over several
 * services in turn, as a round-robin load balancer would, so that a conversation's consecutive
 * messages reach different replicas.
 */
export async function sendPaced({
  pool,
  url,
  targets = [{ pool, url }],
  secret,
  rate,
  seconds,
  conversations = 1000,
  maxInFlight = 5_000,
}) {
  const headers = messageHeaders(secret);
  const requests = targets.map((target) =>
    Array.from({ length: conversations }, (_, index) =>
      buildRequest(target.url, headers, messageBody(`conv-${index}`)),
    ),
  );
  const acceptLatencies = [];
  const total = Math.round(rate * seconds);
  const accepted = new Map();
  const statuses = {};
  const refusals = {};
  let sent = 0;
  let skipped = 0;
  let errors = 0;
  // By error code (or message): what a failed request met, for the JSON results.
  const errorKinds = {};
  let inFlight = 0;
  let lastSentAt = 0;

  const answered = (sentAt, error, status, body) => {
    inFlight -= 1;
    if (error !== null) {
      errors += 1;
      const kind = error.code ?? error.message;
      errorKinds[kind] = (errorKinds[kind] ?? 0) + 1;
      return;
    }
    const at = nowMs();
    statuses[status] = (statuses[status] ?? 0) + 1;
    if (status === 200) {
      accepted.set(messageIdOf(body), at);
      acceptLatencies.push(at - sentAt);
    } else {
      const key = `${status} ${CODE.exec(body)?.[1] ?? "?"}`;
      refusals[key] = (refusals[key] ?? 0) + 1;
    }
  };
  const sendOne = (index) => {
    inFlight += 1;
    // The next target in turn, shifted by one after each pass over the conversations: with plain
    // index % targets a conversation (index % conversations) would always meet the same replica
    // whenever the count of targets divides the count of conversations (2 into 1,000), and its
    // messages would never cross replicas.
    const target = (index + Math.floor(index / conversations)) % targets.length;
    const sentAt = nowMs();
    targets[target].pool.send(requests[target][index % conversations], (error, status, body) =>
      answered(sentAt, error, status, body),
    );
  };

  const startedAt = nowMs();
  await new Promise((resolve) => {
    const timer = setInterval(() => {
      const due = Math.min(total, Math.floor((nowMs() - startedAt) * (rate / 1000)));
      while (sent < due) {
        if (inFlight >= maxInFlight) skipped += 1;
        else sendOne(sent);
        sent += 1;
      }
      if (sent >= total) {
        lastSentAt = nowMs();
        clearInterval(timer);
        resolve();
      }
    }, TICK_MS);
  });

  const settleBy = nowMs() + SETTLE_TIMEOUT_MS;
  while (inFlight > 0 && nowMs() < settleBy) await new Promise((resolve) => setTimeout(resolve, 5));

  const sendSeconds = (lastSentAt - startedAt) / 1000;
  return {
    offered: rate,
    total,
    achievedRate: sendSeconds > 0 ? (total - skipped) / sendSeconds : null,
    startedAt,
    endedAt: lastSentAt,
    accepted,
    statuses,
    refusals,
    errors,
    errorKinds,
    skipped,
    unanswered: inFlight,
    acceptLatencies: acceptLatencies.sort((a, b) => a - b),
  };
}
