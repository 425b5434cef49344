// The builds side by side in the bench's report: this build next to the one given with
// --baseline, and each build in memory next to its durable run.

import { ms } from "./latency.mjs";
import { int, ratio, table } from "./report-format.mjs";
import { TARGETS } from "./report-targets.mjs";

/** p99 of the step at `rate`, saying when that step was not clean; "n/a" without one. */
export function p99At(run, rate) {
  const step = run.steps.find((candidate) => candidate.offered === rate);
  return step?.p99 == null ? "n/a" : `${ms(step.p99)} ms${step.clean ? "" : " (step not clean)"}`;
}

/**
 * This build next to the one given with --baseline: the inbound rows with their ratio paired
 * per round, and the headline numbers of the end-to-end runs (in memory, and durable unless
 * skipped).
 */
export function baselineLines({
  inbound,
  endToEnd,
  endToEndBaseline,
  endToEndDurable,
  endToEndDurableBaseline,
  baseline,
}) {
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
export function durableLines(results) {
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
