// End to end through workerd: replies per second of the Worker's whole path, the client's POST
// to the reply at a receiver (fetch → the inbound queue → its consumer → the conversation's
// Durable Object → the reply POST, all simulated by Miniflare on this machine), for this
// checkout's Worker and, with `--worker-baseline <checkout>` (once or more), other checkouts'
// Workers (each with its own wrangler.toml), alternating A B C | C B A over the rounds, in one run.
//
// Each run sends a fixed burst of messages spread over conversations, as fast as the raw
// client goes, and waits for every reply: replies/s is replies over the time from the first
// send to the last reply. Twice: with a receiver that answers at once, and with one that
// takes 100 ms per reply, where a consumer that waits for its receivers shows. Miniflare's local queue delivers one batch at a time (whatever
// max_concurrency says) and waits up to max_batch_timeout (1 s) for a batch to fill, so the
// numbers show how each design uses one local runtime, not what Cloudflare would do.

import { sortedPercentile } from "./latency.mjs";
import { CHANNEL_PATH, messageBody, messageHeaders } from "./message.mjs";
import { cpuSeconds } from "./proc-stats.mjs";
import { buildRequest, createRawClient } from "./raw-client.mjs";
import { startReceiver } from "./receiver-client.mjs";
import { benchConfig, bundleWorker, failureReason, startWorkerd } from "./workerd.mjs";

const CONNECTIONS = 16;
/** The receivers each Worker meets: modes of bench/receiver.mjs. */
const RECEIVERS = [
  { label: "receiver answers at once", mode: "answer" },
  { label: "receiver answers after 100 ms", mode: "delay:100" },
];
const WAIT_FOR_REPLIES_MS = 120_000;
const POLL_MS = 100;

const nowMs = () => Number(process.hrtime.bigint() / 1000n) / 1000;
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * The Workers to measure: this checkout's (`built`, from prepareWorkerd) and each checkout of
 * `baselineCheckouts`, bundled now. Returns `{ builds, cleanup(), baselineSkipped }`, where
 * `baselineSkipped` lists the reasons of the baselines that could not be bundled.
 */
export async function prepareWorkerdEndToEnd({ built, baselineCheckouts, log }) {
  const builds = [{ key: "this", name: "this build", built }];
  const cleanups = [];
  const baselineSkipped = [];
  for (const [index, checkout] of baselineCheckouts.entries()) {
    log(`workerd end to end: bundling the baseline Worker of ${checkout}`);
    try {
      const baseline = await bundleWorker(checkout);
      builds.push({ key: `baseline${index}`, name: `baseline (${checkout})`, built: baseline });
      cleanups.push(() => baseline.cleanup());
    } catch (error) {
      const reason = `could not bundle the baseline Worker of ${checkout}: ${failureReason(error)}`;
      log(`workerd end to end: ${reason}; measuring without it`);
      baselineSkipped.push(reason);
    }
  }
  return { builds, cleanup: () => Promise.all(cleanups.map((cleanup) => cleanup())), baselineSkipped };
}

/** One burst through one Worker: a fresh workerd and receiver, stopped afterwards. */
async function runOnce(build, { secret, messages, conversations, receiverMode }) {
  const receiver = await startReceiver(receiverMode);
  let workerd;
  let client;
  try {
    workerd = await startWorkerd(build.built, { config: benchConfig(receiver.url), secret });
    const url = new URL(CHANNEL_PATH, workerd.url).href;
    client = createRawClient(url, CONNECTIONS);
    const headers = messageHeaders(secret);
    const acceptedAt = new Map();
    let refused = 0;
    let errors = 0;
    const cpuBefore = workerd.pid === null ? null : cpuSeconds(workerd.pid);
    const started = nowMs();
    await new Promise((resolve) => {
      let pending = messages;
      for (let index = 0; index < messages; index += 1) {
        const request = buildRequest(url, headers, messageBody(`conv-${index % conversations}`));
        client.send(request, (error, status, body) => {
          if (error) errors += 1;
          else if (status === 200) acceptedAt.set(JSON.parse(body).message_id, nowMs());
          else refused += 1;
          pending -= 1;
          if (pending === 0) resolve();
        });
      }
    });
    const sentSeconds = (nowMs() - started) / 1000;
    const arrivals = new Map();
    const deadline = Date.now() + WAIT_FOR_REPLIES_MS;
    while (arrivals.size < acceptedAt.size && Date.now() < deadline) {
      await sleep(POLL_MS);
      const taken = await receiver.take();
      for (const [id, at] of taken.arrivals) if (acceptedAt.has(id) && !arrivals.has(id)) arrivals.set(id, at);
    }
    const cpuAfter = workerd.pid === null ? null : cpuSeconds(workerd.pid);
    const last = Math.max(started, ...arrivals.values());
    const seconds = (last - started) / 1000;
    const latencies = [...arrivals].map(([id, at]) => at - (acceptedAt.get(id) ?? at)).sort((a, b) => a - b);
    return {
      sent: messages,
      accepted: acceptedAt.size,
      refused,
      errors,
      delivered: arrivals.size,
      sentSeconds,
      seconds,
      repliesPerSecond: seconds > 0 ? arrivals.size / seconds : null,
      p50: sortedPercentile(latencies, 50),
      p99: sortedPercentile(latencies, 99),
      cpuMicrosPerReply:
        cpuBefore === null || cpuAfter === null || arrivals.size === 0
          ? null
          : ((cpuAfter - cpuBefore) * 1e6) / arrivals.size,
    };
  } finally {
    await client?.close();
    await workerd?.dispose().catch(() => undefined);
    await receiver.stop();
  }
}

const median = (values) => {
  const sorted = values.filter((value) => value !== null).sort((a, b) => a - b);
  return sorted.length === 0 ? null : sorted[Math.floor((sorted.length - 1) / 2)];
};

/**
 * Runs `rounds` bursts of `messages` (over `conversations` conversations) through each build,
 * alternating the order per round, against each receiver of {@link RECEIVERS}; returns per
 * receiver and build the runs and their medians.
 */
export async function runWorkerdEndToEnd({ builds, secret, log, messages, conversations, rounds }) {
  const scenarios = [];
  for (const receiver of RECEIVERS) {
    log(` ${receiver.label}`);
    const runs = new Map(builds.map((build) => [build.key, []]));
    for (let round = 0; round < rounds; round += 1) {
      const order = round % 2 === 0 ? builds : [...builds].reverse();
      for (const build of order) {
        const run = await runOnce(build, { secret, messages, conversations, receiverMode: receiver.mode });
        runs.get(build.key).push(run);
        log(
          `  ${build.name}: ${run.delivered}/${run.accepted} replies in ${run.seconds.toFixed(2)} s ` +
            `= ${Math.round(run.repliesPerSecond ?? 0)} replies/s, p50 ${Math.round(run.p50 ?? 0)} ms, p99 ${Math.round(run.p99 ?? 0)} ms` +
            (run.refused + run.errors > 0 ? `, ${run.refused} refused, ${run.errors} errors` : ""),
        );
      }
    }
    scenarios.push({
      receiver: receiver.label,
      builds: builds.map((build) => {
        const mine = runs.get(build.key);
        return {
          key: build.key,
          name: build.name,
          runs: mine,
          repliesPerSecond: median(mine.map((run) => run.repliesPerSecond)),
          p50: median(mine.map((run) => run.p50)),
          p99: median(mine.map((run) => run.p99)),
          cpuMicrosPerReply: median(mine.map((run) => run.cpuMicrosPerReply)),
          lost: mine.reduce((sum, run) => sum + run.accepted - run.delivered, 0),
        };
      }),
    });
  }
  return { messages, conversations, rounds, scenarios };
}

/** The section of the report: per receiver, one row per build, and this build over the baseline. */
export function workerdEndToEndLines(result) {
  if (result === null || result === undefined) return [];
  const num = (value, digits = 0) => (value === null || value === undefined ? "n/a" : value.toFixed(digits));
  const lines = [
    `### End to end through workerd: ${result.messages} messages over ${result.conversations} conversations, ${result.rounds} rounds`,
    "",
    "| receiver | Worker | replies/s | p50 ms | p99 ms | workerd CPU µs/reply | lost |",
    "| --- | --- | ---: | ---: | ---: | ---: | ---: |",
  ];
  const ratios = [];
  for (const scenario of result.scenarios) {
    for (const build of scenario.builds) {
      lines.push(
        `| ${scenario.receiver} | ${build.name} | ${num(build.repliesPerSecond)} | ${num(build.p50)} | ${num(build.p99)} | ${num(build.cpuMicrosPerReply)} | ${build.lost} |`,
      );
    }
    const [mine, ...baselines] = scenario.builds;
    for (const baseline of baselines) {
      if (!mine?.repliesPerSecond || !baseline.repliesPerSecond) continue;
      const over = baselines.length > 1 ? ` over ${baseline.name}` : "";
      ratios.push(`${(mine.repliesPerSecond / baseline.repliesPerSecond).toFixed(2)} × (${scenario.receiver}${over})`);
    }
  }
  lines.push(
    "",
    "Medians over the rounds. replies/s: replies received over the time from the first send to the last reply; " +
      "latency: the client's 200 to the reply at the receiver. Miniflare's local queue runs one batch at a time and " +
      "waits up to 1 s for a batch to fill.",
    "",
  );
  if (ratios.length > 0) lines.push(`This build's replies/s over the baseline's: ${ratios.join(", ")}.`, "");
  if (result.baselineSkipped) lines.push(`Baseline: ${result.baselineSkipped}.`, "");
  return lines;
}
