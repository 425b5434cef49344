// The bench's pass/fail targets: each with what was measured and whether it passes.

import { ms } from "./latency.mjs";
import { mb } from "./proc-stats.mjs";
import { int, ratio, table, verdict } from "./report-format.mjs";
import { saturationTargets } from "./saturation-report.mjs";

export const TARGETS = {
  inboundRatio: 0.9,
  endToEndP99Ms: 5,
  endToEndRate: 1_000,
  repliesPerSecond: 10_000,
  bufferedPeakRssBytes: 150e6,
};

/** The targets, each with what was measured and whether it passes (null: not measured). */
export function evaluateTargets({
  inbound,
  endToEnd,
  endToEndThread,
  metricsCost,
  buffer,
  bufferThread,
  durable,
  postgres,
  saturation,
}) {
  const service = inbound.find((row) => row.key === "service");
  const fastify = inbound.find((row) => row.key === "fastify");
  const again = inbound.find((row) => row.key === "bare-again");
  const noiseFloor =
    again?.ratio == null
      ? ""
      : `; the same bare server twice: ${again.ratio.toFixed(3)}` +
        (again.ratioRange ? ` (rounds ${ratio(again.ratioRange[0])}–${ratio(again.ratioRange[1])})` : "");
  const atTarget = endToEnd.steps.find((step) => step.offered === TARGETS.endToEndRate);
  return [
    {
      target: `inbound req/s ≥ ${TARGETS.inboundRatio} × bare node:http`,
      measured:
        service?.ratio == null
          ? "n/a"
          : `${service.ratio.toFixed(3)} × (${int(service.requestsPerSecond)} req/s${service.ratioRange ? `, rounds ${ratio(service.ratioRange[0])}–${ratio(service.ratioRange[1])}` : ""})${noiseFloor}`,
      pass: service?.ratio == null ? null : service.ratio >= TARGETS.inboundRatio,
    },
    {
      target: "inbound ratio ≥ Fastify's ratio (same checks)",
      measured:
        fastify?.ratio == null || service?.ratio == null
          ? "n/a (no Fastify row)"
          : `${service.ratio.toFixed(3)} vs Fastify ${fastify.ratio.toFixed(3)}`,
      pass: fastify?.ratio == null || service?.ratio == null ? null : service.ratio >= fastify.ratio,
    },
    {
      target: `end-to-end p99 < ${TARGETS.endToEndP99Ms} ms at ${int(TARGETS.endToEndRate)} msg/s`,
      measured: atTarget ? `${ms(atTarget.p99)} ms${atTarget.clean ? "" : " (step not clean)"}` : "n/a",
      pass: atTarget?.p99 == null ? null : atTarget.clean && atTarget.p99 < TARGETS.endToEndP99Ms,
    },
    repliesTarget(endToEnd, "stock config"),
    ...(durable?.thisBuild ? [durableTarget(durable.thisBuild)] : []),
    ...(postgres?.oneAgainstSqlite ? postgresTargets(postgres) : []),
    ...saturationTargets(saturation),
    ...(metricsCost ? [metricsCostTarget(metricsCost)] : []),
    ...(endToEndThread ? [repliesTarget(endToEndThread, "delivery_thread: true")] : []),
    memoryTarget(buffer, "stock config"),
    ...(bufferThread ? [memoryTarget(bufferThread, "delivery_thread: true")] : []),
  ];
}

/**
 * Issue 23: with state_dir, at least 0.90 of the replies per second of the same build in memory
 * (each the mean over the offered rates both runs stepped through; see compareDurable).
 */
function durableTarget(compared) {
  return {
    target: "durable (state_dir) replies/s ≥ 0.90 × in memory, same build",
    measured:
      compared.ratio == null
        ? "n/a"
        : `${compared.ratio.toFixed(3)} × (${int(compared.meanDurable)} vs ${int(compared.meanMemory)} replies/s, mean over ${compared.rates.map(int).join(", ")} msg/s)`,
    pass: compared.ratio == null ? null : compared.ratio >= 0.9,
  };
}

/**
 * Issue 22: one replica on Postgres at least 0.5 × the replies/s of SQLite durable mode (same
 * build, mean over the rates both stepped through), and two replicas more than one (the highest
 * replies/s of a clean step).
 */
function postgresTargets(postgres) {
  const compared = postgres.oneAgainstSqlite;
  const best = (run) => run?.highestDeliveredPerSecond ?? 0;
  return [
    {
      target: "postgres_url_env, 1 replica: replies/s ≥ 0.5 × durable (state_dir), same build",
      measured:
        compared.ratio == null
          ? "n/a"
          : `${compared.ratio.toFixed(3)} × (${int(compared.meanRun)} vs ${int(compared.meanBase)} replies/s, mean over ${compared.rates.map(int).join(", ")} msg/s)`,
      pass: compared.ratio == null ? null : compared.ratio >= 0.5,
    },
    {
      target: "postgres_url_env: 2 replicas deliver more replies/s than 1 (highest clean step)",
      measured: `${int(best(postgres.two))} against ${int(best(postgres.one))} replies/s`,
      pass: postgres.two == null ? null : best(postgres.two) > best(postgres.one),
    },
  ];
}

function memoryTarget(buffer, setup) {
  const full = buffer.accepted >= buffer.capacity;
  return {
    target: `peak RSS < ${TARGETS.bufferedPeakRssBytes / 1e6} MB with ${int(buffer.capacity)} buffered; ${setup}`,
    measured: `${mb(buffer.peakRss)} MB (${int(buffer.accepted)} buffered${full ? "" : ", buffer not full"})`,
    pass: buffer.peakRss === null ? null : full && buffer.peakRss < TARGETS.bufferedPeakRssBytes,
  };
}

/**
 * Metrics on (the stock config) against off, alternating: at most 3% fewer replies per second,
 * as the mean over every step of every round.
 */
function metricsCostTarget(cost) {
  const share = cost.meanOn !== null && cost.meanOff ? cost.meanOn / cost.meanOff : null;
  return {
    target: "replies/s with /metrics on ≥ 0.97 × with observability.metrics: false (alternating)",
    measured:
      share === null
        ? "n/a"
        : `${share.toFixed(3)} × (${int(cost.meanOn)} vs ${int(cost.meanOff)} replies/s, mean of ${cost.rounds} round(s) at ${cost.rates.map(int).join(", ")} msg/s)`,
    pass: share === null ? null : share >= 0.97,
  };
}

function repliesTarget(run, setup) {
  return {
    target: `≥ ${int(TARGETS.repliesPerSecond)} replies/s delivered (echo), no 503; ${setup}`,
    measured: `${int(run.highestDeliveredPerSecond)} replies/s (highest clean step: ${int(run.highestCleanRate)} msg/s)`,
    pass: run.highestDeliveredPerSecond >= TARGETS.repliesPerSecond * 0.98,
  };
}

export const targetsTable = (targets) =>
  table(
    ["target", "measured", "result"],
    targets.map((row) => [row.target, row.measured, verdict(row.pass)]),
  );
