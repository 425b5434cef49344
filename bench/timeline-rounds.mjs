// The message timeline's cost, measured again: its on and off setups of the saturation phase run
// more rounds, alternating, and the target reads their means (saturation.mjs, saturation-report.mjs).

const int = (value) => (value === null || value === undefined ? "n/a" : Math.round(value).toLocaleString("en-US"));

/** The on and off setups of the message timeline's cost, in memory and with a state_dir. */
const TIMELINE_PAIRS = [
  ["memory-timeline", "memory-timeline-off"],
  ["sqlite", "sqlite-timeline-off"],
];

/**
 * The timeline's cost runs again: its on and off setups, `options.timelineRounds` in all with
 * the sweep's run as the first, alternating (off on, on off, …) so that both meet the same
 * stretches of a machine whose speed drifts. Returns every run of those setups, the sweep's too.
 */
export async function timelineRounds({ setups, runs, options, log, measure }) {
  const byKey = new Map(setups.map((setup) => [setup.key, setup]));
  const pairs = TIMELINE_PAIRS.filter(([on, off]) => byKey.has(on) && byKey.has(off));
  const all = runs.filter((run) => pairs.some((pair) => pair.includes(run.key)));
  // The sweep's order is round 1's: each later round turns it around.
  const position = (key) => runs.findIndex((run) => run.key === key);
  const inSweepOrder = pairs.map((pair) => [...pair].sort((a, b) => position(a) - position(b)));
  for (let round = 2; round <= options.timelineRounds; round += 1) {
    for (const pair of inSweepOrder) {
      for (const key of round % 2 === 0 ? [...pair].reverse() : pair) {
        const setup = byKey.get(key);
        const run = await measure(setup);
        all.push(run);
        log(
          `  timeline round ${round}, ${setup.name}: ${int(run.repliesPerSecond)} replies/s, ${int(run.cpuMicrosPerReply)} µs CPU/reply`,
        );
      }
    }
  }
  return all;
}

/** The mean replies per second of every run of `key` in `runs`, null without one. */
export function meanRate(runs, key) {
  const rates = runs.filter((run) => run.key === key).map((run) => run.repliesPerSecond);
  return rates.length === 0 ? null : rates.reduce((sum, rate) => sum + rate, 0) / rates.length;
}

/** The mean of every run of `on` over that of `off`, null when either is missing. */
export function timelineRatio(runs, on, off) {
  const [onRate, offRate] = [meanRate(runs, on), meanRate(runs, off)];
  return onRate === null || !offRate ? null : onRate / offRate;
}

/** The mean service CPU per reply of every run of `key` in `runs`, null without one that has it. */
function meanCpu(runs, key) {
  const cpus = runs
    .filter((run) => run.key === key && typeof run.cpuMicrosPerReply === "number")
    .map((run) => run.cpuMicrosPerReply);
  return cpus.length === 0 ? null : cpus.reduce((sum, cpu) => sum + cpu, 0) / cpus.length;
}

/**
 * The rates a ratio of {@link timelineRatio} was read from, for the report, with the service's
 * CPU per reply: what the timeline costs the service itself, which a rate on a machine whose
 * speed drifts shows less steadily.
 */
export function timelineMeans(runs, on, off) {
  const rounds = runs.filter((run) => run.key === on).length;
  const means = `${int(meanRate(runs, on))} vs ${int(meanRate(runs, off))} replies/s`;
  const cpu = `service CPU ${int(meanCpu(runs, on))} vs ${int(meanCpu(runs, off))} µs/reply`;
  return rounds > 1 ? `${means}, ${cpu}, means of ${rounds} alternating runs each` : `${means}, ${cpu}`;
}

/** Each run of the timeline's on and off setups, when they ran more than once. */
export function timelineRoundLines(timelineRuns, runs) {
  const keys = [...new Set(timelineRuns.map((run) => run.key))];
  if (!keys.some((key) => timelineRuns.filter((run) => run.key === key).length > 1)) return [];
  const named = (key) => runs.find((run) => run.key === key)?.name ?? key;
  return [
    "The message timeline's cost, alternating runs (the first is the table's): " +
      keys
        .map(
          (key) =>
            `${named(key)}: ${timelineRuns
              .filter((run) => run.key === key)
              .map((run) => int(run.repliesPerSecond))
              .join(", ")}`,
        )
        .join("; ") +
      " replies/s.",
    "",
  ];
}
