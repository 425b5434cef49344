// Turns the results into tables (Markdown, which also reads well in a terminal); the targets
// are evaluated in report-targets.mjs.

import { ms } from "./latency.mjs";
import { mb } from "./proc-stats.mjs";
import { baselineLines, durableLines } from "./report-baseline.mjs";
import { int, ratio, table } from "./report-format.mjs";
import { targetsTable } from "./report-targets.mjs";
import { saturationLines } from "./saturation-report.mjs";
import { workerdEndToEndLines } from "./workerd-end-to-end.mjs";

const memoryLine = (buffer) =>
  `${int(buffer.accepted)} messages buffered (capacity ${int(buffer.capacity)}), ${int(buffer.refused)} refused with 503; ` +
  `RSS idle ${mb(buffer.idleRss)} MB, after ${mb(buffer.rssAfter)} MB, peak ${mb(buffer.peakRss)} MB.`;

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

export { evaluateTargets } from "./report-targets.mjs";
