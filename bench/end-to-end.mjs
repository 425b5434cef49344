// End to end: from the 200 that accepts a message to its reply arriving at the receiver,
// at stepped offered rates, with the service in its stock configuration (default
// buffer_capacity 1000, so an overloaded consumer shows as 503 rather than as a queue that
// grows for the whole step).
import { sortedPercentile } from "./latency.mjs";
import { createSenderPool, nowMs, sendPaced } from "./paced-sender.mjs";
import { cpuSecondsOf } from "./proc-stats.mjs";

const DELIVERY_GRACE_MS = 10_000;
const POLL_MS = 200;

/**
 * Collects the receiver's notes until every accepted message has its reply or the grace
 * period is over, and returns the latencies (reply arrival − 200 read), sorted.
 */
async function collectReplies(receiver, accepted) {
  const latencies = [];
  const pending = new Map(accepted);
  let lastArrival = 0;
  const giveUpAt = nowMs() + DELIVERY_GRACE_MS;
  for (;;) {
    const { arrivals } = await receiver.take();
    for (const [id, at] of arrivals) {
      const acceptedAt = pending.get(id);
      if (acceptedAt === undefined) continue;
      pending.delete(id);
      // Can be slightly negative: the consumer may post the reply before the client has
      // read its 200. That is real and kept.
      latencies.push(at - acceptedAt);
      if (at > lastArrival) lastArrival = at;
    }
    if (pending.size === 0 || nowMs() > giveUpAt) break;
    await new Promise((resolve) => setTimeout(resolve, POLL_MS));
  }
  latencies.sort((a, b) => a - b);
  return { latencies, missing: pending.size, lastArrival };
}

/** One step: send at `rate` for `seconds` (to each of `targets` in turn), then match the replies. */
export async function runStep({ targets, pids, secret, receiver, rate, seconds }) {
  await receiver.take(); // drop notes of earlier steps
  const cpuBefore = cpuSecondsOf(pids);
  const sent = await sendPaced({ targets, secret, rate, seconds });
  const { latencies, missing, lastArrival } = await collectReplies(receiver, sent.accepted);
  const cpuAfter = cpuSecondsOf(pids);
  const refused = sent.statuses[503] ?? 0;
  const otherStatuses = Object.entries(sent.statuses)
    .filter(([status]) => status !== "200" && status !== "503")
    .reduce((sum, [, count]) => sum + count, 0);
  const delivered = latencies.length;
  const spanSeconds = lastArrival > sent.startedAt ? (lastArrival - sent.startedAt) / 1000 : null;
  // The sender itself can fall behind on a busy 2-core box; a step it could not offer
  // is not counted as the server's success.
  const senderKeptUp = sent.skipped === 0 && sent.achievedRate !== null && sent.achievedRate >= 0.95 * rate;
  return {
    offered: rate,
    achievedRate: sent.achievedRate,
    sent: sent.total - sent.skipped,
    accepted: sent.accepted.size,
    refused,
    otherStatuses,
    errors: sent.errors + sent.unanswered,
    errorKinds: sent.unanswered > 0 ? { ...sent.errorKinds, unanswered: sent.unanswered } : sent.errorKinds,
    skipped: sent.skipped,
    delivered,
    missing,
    deliveredPerSecond: spanSeconds ? delivered / spanSeconds : null,
    // The service's CPU per delivered message: inbound request plus outbound POST.
    serviceCpuMicrosPerMessage:
      cpuBefore === null || cpuAfter === null || delivered === 0 ? null : ((cpuAfter - cpuBefore) * 1e6) / delivered,
    p50: sortedPercentile(latencies, 50),
    p99: sortedPercentile(latencies, 99),
    // From sending a message to reading its 200: what the client waits for.
    acceptP99: sortedPercentile(sent.acceptLatencies, 99),
    max: latencies.length > 0 ? latencies[latencies.length - 1] : null,
    senderKeptUp,
    // Clean: nothing refused or lost, and delivered at (nearly) the offered rate rather than
    // through a backlog that drained after the sender stopped.
    clean:
      refused === 0 &&
      otherStatuses === 0 &&
      sent.errors + sent.unanswered === 0 &&
      missing === 0 &&
      senderKeptUp &&
      spanSeconds !== null &&
      delivered / spanSeconds >= 0.95 * rate,
  };
}

/**
 * Steps the offered rate up through `rates` on one service, stopping after `extraAfterFailure`
 * failed steps past the first failure (enough to show the knee without minutes of overload).
 */
export async function runEndToEnd({
  url,
  pid,
  urls = [url],
  pids = [pid],
  secret,
  receiver,
  rates,
  seconds,
  warmupSeconds,
  extraAfterFailure,
  log,
}) {
  const targets = urls.map((target) => ({ url: target, pool: createSenderPool(target) }));
  try {
    await sendPaced({ targets, secret, rate: 1_000, seconds: warmupSeconds });
    await collectReplies(receiver, new Map());
    const steps = [];
    let failures = 0;
    for (const rate of rates) {
      const step = await runStep({ targets, pids, secret, receiver, rate, seconds });
      steps.push(step);
      log(
        `  ${rate} msg/s offered: ${step.delivered}/${step.sent} delivered, p50 ${fmt(step.p50)} ms, p99 ${fmt(step.p99)} ms` +
          (step.refused > 0 ? `, ${step.refused} × 503` : "") +
          (step.senderKeptUp ? "" : `, sender reached only ${Math.round(step.achievedRate ?? 0)}/s`),
      );
      if (!step.clean) {
        failures += 1;
        if (failures > extraAfterFailure) break;
      }
    }
    const cleanSteps = steps.filter((step) => step.clean);
    const best = cleanSteps.at(-1) ?? null;
    return {
      steps,
      highestCleanRate: best?.offered ?? null,
      highestDeliveredPerSecond: cleanSteps.reduce((max, step) => Math.max(max, step.deliveredPerSecond ?? 0), 0),
    };
  } finally {
    await Promise.all(targets.map((target) => target.pool.close()));
  }
}

const fmt = (value) => (value === null ? "n/a" : value.toFixed(2));
