// The no-knee steps in the report (issue 30): their table, and this build's targets.
import { int, ratio, table, verdict } from "./report-format.mjs";

/** "n × 503 buffer_full, m × 500 internal" or "none". */
const refusalsText = (refusals) => {
  const parts = Object.entries(refusals ?? {}).map(([key, count]) => `${int(count)} × ${key}`);
  return parts.length === 0 ? "none" : parts.join(", ");
};

/** The no-knee table: one row per step, this build's and (with --baseline) the baseline build's. */
export function noKneeLines(steps) {
  if (!steps?.length) return [];
  const rows = steps.map((step) =>
    step.skipped !== null
      ? [step.name, "n/a", "n/a", "n/a", "n/a", "n/a", "n/a", "n/a", "n/a", `skipped (${step.skipped})`]
      : [
          step.name,
          int(step.cleanRate),
          int(step.offered),
          int(step.achievedRate) + (step.senderKeptUp ? "" : " (sender fell behind)"),
          int(step.deliveredPerSecond),
          ratio(step.ratio),
          int(step.accepted),
          int(step.bufferFull),
          `${int(step.otherRefusals)} / ${int(step.errors)}`,
          step.build === "baseline" ? "baseline (not a target)" : verdict(step.pass),
        ],
  );
  return [
    "### No knee: twice the highest clean rate (open-loop sender, 256 connections per server)",
    "",
    table(
      [
        "setup",
        "highest clean rate",
        "offered msg/s",
        "sender reached",
        "replies/s",
        "× clean rate",
        "accepted",
        "503 buffer_full",
        "other refusals / errors",
        "result",
      ],
      rows,
    ),
    "",
    "Replies/s: those that arrived from 1 s after the start of the overload to the last send. The clean rate is " +
      "the highest offered rate of this build's stepped run with no 503 (tables above); a baseline build's step " +
      "is offered the same rate, and only this build's steps are targets.",
    "",
  ];
}

/** A target per step of this build: at least `noKneeRatio` of its clean rate, the rest 503 buffer_full. */
export function noKneeTargets(steps, noKneeRatio) {
  const targets = [];
  for (const step of (steps ?? []).filter((candidate) => candidate.build !== "baseline")) {
    targets.push({
      target: `no knee, ${step.name}: offered 2 × its highest clean rate, replies/s ≥ ${noKneeRatio} × that rate, the rest 503 buffer_full`,
      measured:
        step.skipped !== null
          ? `n/a (${step.skipped})`
          : `${ratio(step.ratio)} × (${int(step.deliveredPerSecond)} replies/s against ${int(step.cleanRate)}; offered ${int(step.offered)}, ` +
            `sender reached ${int(step.achievedRate)} msg/s; ${int(step.accepted)} accepted, ${refusalsText(step.refusals)}, ${int(step.errors)} errors)`,
      pass: step.skipped !== null ? null : step.pass,
    });
  }
  return targets;
}
