// The no-knee step (issue 30): a setup offered twice the highest rate it delivered cleanly in
// its stepped run must still deliver at least 0.9 of that rate, and refuse the rest with 503
// `buffer_full`, rather than collapse past its knee. The load is the stepped runs' open-loop
// sender (paced-sender.mjs): a rate above capacity is only meaningful when the sender does not
// slow down with the server, which a closed loop (wrk) would. It reads each refusal's problem
// `code`.
import { createSenderPool, sendPaced } from "./paced-sender.mjs";
import { cpuSecondsOf } from "./proc-stats.mjs";

// The first second of the overload fills the buffer; the rate is read after it.
const RAMP_MS = 1_000;
const WARMUP_RATE = 1_000;
const SETTLE_MS = 1_000;
// More connections than the stepped runs' 64: at twice a saturated server's rate each answer
// takes long, and with 64 the sender itself would hold the excess back instead of offering it,
// as many clients at once would. Still well below the service's max_connections.
const CONNECTIONS = 256;

/**
 * Runs the step on a fresh `server` ({ urls, pids }), sending to each of its urls in turn:
 * a warm-up at a low rate, then `2 × cleanRate` for `seconds`. Replies per second are those that
 * arrived at `receiver` from the end of the ramp to the last send, over that time.
 */
export async function runNoKneeStep({ server, secret, receiver, cleanRate, seconds, warmupSeconds }) {
  const targets = server.urls.map((url) => ({ url, pool: createSenderPool(url, CONNECTIONS) }));
  try {
    await sendPaced({ targets, secret, rate: WARMUP_RATE, seconds: warmupSeconds });
    await new Promise((resolve) => setTimeout(resolve, SETTLE_MS));
    await receiver.take();
    const offered = 2 * cleanRate;
    const cpuBefore = cpuSecondsOf(server.pids);
    const sent = await sendPaced({ targets, secret, rate: offered, seconds });
    const cpuAfter = cpuSecondsOf(server.pids);
    const { arrivals } = await receiver.take();
    const from = sent.startedAt + RAMP_MS;
    const to = sent.endedAt;
    let inWindow = 0;
    for (const at of arrivals.values()) if (at >= from && at < to) inWindow += 1;
    const deliveredPerSecond = to > from ? inWindow / ((to - from) / 1000) : null;
    const refused = Object.values(sent.refusals).reduce((sum, count) => sum + count, 0);
    const bufferFull = sent.refusals["503 buffer_full"] ?? 0;
    const ratio = deliveredPerSecond === null ? null : deliveredPerSecond / cleanRate;
    return {
      cleanRate,
      offered,
      achievedRate: sent.achievedRate,
      sent: sent.total - sent.skipped,
      // Messages the sender could not send in time (it held too many unanswered ones).
      senderSkipped: sent.skipped,
      senderKeptUp: sent.achievedRate !== null && sent.achievedRate >= 0.95 * offered,
      accepted: sent.accepted.size,
      refusals: sent.refusals,
      bufferFull,
      otherRefusals: refused - bufferFull,
      errors: sent.errors + sent.unanswered,
      deliveredPerSecond,
      ratio,
      serviceCpuMicrosPerMessage:
        cpuBefore === null || cpuAfter === null || arrivals.size === 0
          ? null
          : ((cpuAfter - cpuBefore) * 1e6) / arrivals.size,
      // At least 0.9 of the clean rate, and everything not accepted refused as buffer_full.
      pass: ratio !== null && ratio >= 0.9 && refused === bufferFull && sent.errors + sent.unanswered === 0,
    };
  } finally {
    await Promise.all(targets.map((target) => target.pool.close()));
  }
}
