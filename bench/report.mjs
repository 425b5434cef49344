// Turns the results into the pass/fail targets of issue 6 and into tables (Markdown, which
// also reads well in a terminal).

import { ms } from "./latency.mjs";
import { mb } from "./proc-stats.mjs";
import { saturationLines, saturationTargets } from "./saturation-report.mjs";
import { workerdEndToEndLines } from "./workerd-end-to-end.mjs";

const TARGETS = {
  inboundRatio: 0.9,
  endToEndP99Ms: 5,
  endToEndRate: 1_000,
  repliesPerSecond: 10_000,
  bufferedPeakRssBytes: 150e6,
};

const int = (value) => (value === null || value === undefined ? "n/a" : Math.round(value).toLocaleString("en-US"));
const ratio = (value) => (value === null || value === undefined ? "n/a" : value.toFixed(2));
const verdict = (pass) => (pass === null ? "n/a" : pass ? "PASS" : "FAIL");

function table(header, rows) {
  const lines = [`| ${header.join(" | ")} |`, `|${header.map(() => "---").join("|")}|`];
  for (const row of rows) lines.push(`| ${row.join(" | ")} |`);
  return lines.join("\n");
}

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

const memoryLine = (buffer) =>
  `${int(buffer.accepted)} messages buffered (capacity ${int(buffer.capacity)}), ${int(buffer.refused)} refused with 503; ` +
  `RSS idle ${mb(buffer.idleRss)} MB, after ${mb(buffer.rssAfter)} MB, peak ${mb(buffer.peakRss)} MB.`;

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

function inboundTable(inbound) {
  return table(
    [
      "server",
      "req/s",
      "p50 ms",
      "p99 ms",
      "peak RSS MB",
      "ratio to bare",
      "per-round ratios",
      "server CPU µs/req",
      "CPU ratio",
      "failed",
    ],
    inbound.map((row) => [
      row.name,
      int(row.requestsPerSecond),
      ms(row.p50),
      ms(row.p99),
      mb(row.peakRss),
      ratio(row.ratio),
      row.key === "bare" || !row.ratioRange ? "" : `${ratio(row.ratioRange[0])}–${ratio(row.ratioRange[1])}`,
      int(row.cpuMicrosPerRequest),
      ratio(row.cpuRatio),
      int(row.failures),
    ]),
  );
}

function endToEndTable(endToEnd) {
  return table(
    [
      "offered msg/s",
      "sent",
      "delivered",
      "503",
      "p50 ms",
      "p99 ms",
      "max ms",
      "accept p99 ms",
      "replies/s",
      "service CPU µs/msg",
      "clean",
    ],
    endToEnd.steps.map((step) => [
      int(step.offered),
      int(step.sent),
      int(step.delivered),
      int(step.refused),
      ms(step.p50),
      ms(step.p99),
      ms(step.max),
      ms(step.acceptP99),
      int(step.deliveredPerSecond),
      int(step.serviceCpuMicrosPerMessage),
      step.clean ? "yes" : step.senderKeptUp ? "no" : "no (sender fell behind)",
    ]),
  );
}

/** p99 of the step at `rate`, saying when that step was not clean; "n/a" without one. */
function p99At(run, rate) {
  const step = run.steps.find((candidate) => candidate.offered === rate);
  return step?.p99 == null ? "n/a" : `${ms(step.p99)} ms${step.clean ? "" : " (step not clean)"}`;
}

/**
 * This build next to the one given with --baseline: the inbound rows with their ratio paired
 * per round, and the headline numbers of the end-to-end runs (in memory, and durable unless
 * skipped).
 */
function baselineLines({ inbound, endToEnd, endToEndBaseline, endToEndDurable, endToEndDurableBaseline, baseline }) {
  const row = (key) => inbound.find((candidate) => candidate.key === key);
  const current = row("service");
  const before = row("service-baseline");
  const paired = baseline.inbound;
  const spread = paired?.ratioRange ? ` (rounds ${ratio(paired.ratioRange[0])}–${ratio(paired.ratioRange[1])})` : "";
  return [
    "### This build against the baseline build",
    "",
    `Baseline: \`${baseline.entry}\`.`,
    "",
    table(
      ["measure", "this build", "baseline build", "this / baseline"],
      [
        [
          "inbound req/s",
          int(current?.requestsPerSecond),
          int(before?.requestsPerSecond),
          `${ratio(paired?.ratio)}${spread}`,
        ],
        [
          "inbound server CPU µs/req",
          int(current?.cpuMicrosPerRequest),
          int(before?.cpuMicrosPerRequest),
          `CPU ratio ${ratio(paired?.cpuRatio)}`,
        ],
        [
          "end to end: highest clean rate",
          `${int(endToEnd.highestCleanRate)} msg/s`,
          `${int(endToEndBaseline.highestCleanRate)} msg/s`,
          "",
        ],
        [
          `end to end: p99 at ${int(TARGETS.endToEndRate)} msg/s`,
          p99At(endToEnd, TARGETS.endToEndRate),
          p99At(endToEndBaseline, TARGETS.endToEndRate),
          "",
        ],
        ...(endToEndDurable && endToEndDurableBaseline
          ? [
              [
                "end to end, durable (state_dir): highest clean rate",
                `${int(endToEndDurable.highestCleanRate)} msg/s`,
                `${int(endToEndDurableBaseline.highestCleanRate)} msg/s`,
                "",
              ],
              [
                `end to end, durable (state_dir): p99 at ${int(TARGETS.endToEndRate)} msg/s`,
                p99At(endToEndDurable, TARGETS.endToEndRate),
                p99At(endToEndDurableBaseline, TARGETS.endToEndRate),
                "",
              ],
            ]
          : []),
      ],
    ),
    "",
    // Say which numbers are paired: only the inbound ones are free of the VM's drift.
    "Inbound: medians over the same rounds; the ratio is the median of each round's req/s over the baseline's " +
      "in that round, the CPU ratio the baseline's CPU per request over this build's (above 1: this build is faster). " +
      `End to end: one run each, in the order ${endToEndDurable ? "this build, baseline, baseline durable, this build durable" : "this build, baseline"}, ` +
      "so drift between them is not paired out.",
    "",
  ];
}

/** Highest clean rate as "N msg/s", "none" when no step was clean. */
const cleanRate = (run) => (run.highestCleanRate === null ? "none" : `${int(run.highestCleanRate)} msg/s`);

/** A ratio with three decimals, or "n/a". */
const ratio3 = (value) => (value === null || value === undefined ? "n/a" : value.toFixed(3));

/**
 * Each build in memory next to its durable run (state_dir): the highest clean rate, p99 at
 * 1,000 msg/s, and durable / memory of replies per second (see compareDurable in durable.mjs).
 */
function durableLines(results) {
  const { durable } = results;
  const builds = [["this build", results.endToEnd, results.endToEndDurable, durable.thisBuild]];
  if (results.endToEndBaseline) {
    builds.push(["baseline build", results.endToEndBaseline, results.endToEndDurableBaseline, durable.baseline]);
  }
  const rows = builds.flatMap(([build, memory, durableRun, compared]) => [
    [build, "stock (memory)", cleanRate(memory), p99At(memory, TARGETS.endToEndRate), int(compared?.meanMemory), ""],
    [
      build,
      "durable (state_dir)",
      cleanRate(durableRun),
      p99At(durableRun, TARGETS.endToEndRate),
      int(compared?.meanDurable),
      `${ratio3(compared?.ratio)} (highest clean rate: ${ratio(compared?.cleanRateRatio)})`,
    ],
  ]);
  const stepsBothRan = builds
    .map(([build, , , compared]) => `${build} ${compared?.rates.map(int).join(", ") || "none"} msg/s`)
    .join("; ");
  return [
    "### In memory against durable (`state_dir`)",
    "",
    table(
      [
        "build",
        "setup",
        "highest clean rate",
        `p99 at ${int(TARGETS.endToEndRate)} msg/s`,
        "replies/s, mean over the steps both ran",
        "durable / memory",
      ],
      rows,
    ),
    "",
    // How the ratio is made, since "replies per second" of two stepped runs could mean several things.
    "durable / memory: the durable run's replies/s over the memory run's, each the mean over the offered " +
      `rates both runs stepped through (${stepsBothRan}), failed steps included; in brackets the ratio of ` +
      "the highest clean rates, which moves only in whole steps. Each build's two runs are separate services " +
      "run one after the other (with a baseline: this build's memory run first, its durable run last, the baseline's " +
      "two in between), so drift between them is not paired out.",
    "",
  ];
}

const targetsTable = (targets) =>
  table(
    ["target", "measured", "result"],
    targets.map((row) => [row.target, row.measured, verdict(row.pass)]),
  );

function sections(results) {
  const { inbound, endToEnd, endToEndThread, endToEndDurable, buffer, bufferThread, options, workerd, loader } =
    results;
  const out = [
    `### Inbound (${options.rounds} rounds, slices interleaved A B C | C B A; ${loader.description}, ${options.connections} connections)`,
    "",
    inboundTable(inbound),
    "",
    "req/s, latency and CPU: median over the rounds; ratios: median over the rounds of the round's value over bare's.",
    "",
  ];
  if (workerd.skipped) out.push(`Worker under workerd: skipped (${workerd.skipped}).`, "");
  out.push(...workerdEndToEndLines(results.workerdEndToEnd));
  out.push(
    "### End to end (200 read by the client → reply at the receiver), stock config (memory)",
    "",
    endToEndTable(endToEnd),
    "",
    `Highest offered rate delivered without a 503: ${int(endToEnd.highestCleanRate)} msg/s.`,
    "",
  );
  if (endToEndDurable) {
    out.push(
      `### End to end, durable: stock config with \`state_dir\` (SQLite; ${stateWhere(results.durable.state)})`,
      "",
      endToEndTable(endToEndDurable),
      "",
      `Highest offered rate delivered without a 503: ${int(endToEndDurable.highestCleanRate)} msg/s.`,
      "",
    );
  } else out.push(`End to end with \`state_dir\`: skipped (${results.durable?.skipped ?? "not measured"}).`, "");
  if (endToEndThread) {
    out.push(
      "### End to end with `delivery_thread: true` (brain calls and outbound posts on a second thread)",
      "",
      endToEndTable(endToEndThread),
      "",
      `Highest offered rate delivered without a 503: ${int(endToEndThread.highestCleanRate)} msg/s.`,
      "",
    );
  } else out.push("End to end with `delivery_thread: true`: full run only.", "");
  if (results.metricsCost) out.push(...metricsCostLines(results.metricsCost));
  if (results.endToEndBaseline) {
    out.push(
      "### End to end, baseline build (stock config, memory)",
      "",
      endToEndTable(results.endToEndBaseline),
      "",
      `Highest offered rate delivered without a 503: ${int(results.endToEndBaseline.highestCleanRate)} msg/s.`,
      "",
    );
    if (results.endToEndDurableBaseline) {
      out.push(
        "### End to end, baseline build, durable (`state_dir`)",
        "",
        endToEndTable(results.endToEndDurableBaseline),
        "",
        `Highest offered rate delivered without a 503: ${int(results.endToEndDurableBaseline.highestCleanRate)} msg/s.`,
        "",
      );
    }
    out.push(...baselineLines(results));
  }
  if (endToEndDurable) out.push(...durableLines(results));
  out.push(...postgresLines(results.postgres));
  out.push(...saturationLines(results.saturation, options));
  out.push(
    `### Memory with a full buffer`,
    "",
    `Stock config: ${memoryLine(buffer)}`,
    "",
    ...(bufferThread ? [`With \`delivery_thread: true\`: ${memoryLine(bufferThread)}`, ""] : []),
    "### Targets",
    "",
    targetsTable(results.targets),
    "",
  );
  return out.join("\n");
}

/** The Postgres runs: 1 and 2 replicas on one private cluster with its default settings. */
function postgresLines(postgres) {
  if (!postgres || postgres.skipped !== null) {
    return [`End to end with \`postgres_url_env\`: skipped (${postgres?.skipped ?? "not measured"}).`, ""];
  }
  const lines = [];
  for (const [label, run, against] of [
    ["1 replica", postgres.one, null],
    ["1 replica, baseline build", postgres.oneBaseline, postgres.oneAgainstBaseline],
    ["2 replicas, each message to the next replica in turn", postgres.two, null],
    ["2 replicas, baseline build", postgres.twoBaseline, postgres.twoAgainstBaseline],
  ]) {
    if (!run) continue;
    lines.push(
      `### End to end, \`postgres_url_env\`: ${label} (a private cluster on this machine, fsync on)`,
      "",
      endToEndTable(run),
      "",
      `Highest offered rate delivered without a 503: ${int(run.highestCleanRate)} msg/s.`,
      "",
      ...(against?.ratio == null
        ? []
        : [
            `This build against the baseline: ${int(against.meanBase ?? 0)} → ${int(against.meanRun ?? 0)} replies/s, mean over every step (${against.ratio.toFixed(2)} ×).`,
            "",
          ]),
    );
  }
  return lines;
}

/** Where the durable runs kept their state: the file system decides what a commit costs. */
const stateWhere = (state) =>
  `a fresh folder per run in ${state?.folder ?? "the temporary folder"}, file system ${state?.fileSystem ?? "n/a"}`;

const percent = (value) => (value === null || value === undefined ? "n/a" : `${Math.round(value * 100)}%`);

/** Other work on the machine skews everything; say how busy it was around the run. */
const loadLine = ({ machine }) =>
  `CPU busy with other work: ${percent(machine.backgroundLoad)} before the run, ${percent(machine.backgroundLoadAfter)} after it.`;

export const renderTerminal = (results) => `${sections(results)}\n${loadLine(results)}\n`;

export function renderMarkdown(results, chartFile) {
  const { machine } = results;
  return [
    `## webhook-channel bench (${results.mode}), ${results.date}`,
    "",
    `Machine: ${machine.cpus} × ${machine.cpuModel}, ${machine.memoryGiB} GiB, ${machine.platform}, Node ${machine.node}. ` +
      `Load generators (${results.loader.name} inbound, the paced raw-socket sender end to end) on the same machine, loopback only. ` +
      `${loadLine(results)} Run took ${results.durationSeconds} s.`,
    "",
    sections(results),
    `![latency against offered rate](${chartFile})`,
    "",
  ].join("\n");
}

/** The alternating /metrics phase: one row per run, then the means the target compares. */
function metricsCostLines(cost) {
  const rows = cost.runs.map(
    (run) =>
      `| ${run.round} | ${run.setup} | ${run.steps
        .map((step) => `${int(step.deliveredPerSecond ?? 0)}${step.clean ? "" : " (503s)"}`)
        .join(" | ")} |`,
  );
  return [
    "### /metrics on against `observability.metrics: false`, alternating (A B | B A)",
    "",
    `| round | setup | ${cost.rates.map((rate) => `replies/s at ${int(rate)} msg/s`).join(" | ")} |`,
    `|---|---|${cost.rates.map(() => "---").join("|")}|`,
    ...rows,
    "",
    `Mean replies/s over every step: metrics on ${int(cost.meanOn ?? 0)}, off ${int(cost.meanOff ?? 0)}.`,
    "",
  ];
}
