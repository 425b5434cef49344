// The durable end-to-end phase of `npm run bench`: the stock config with a `state_dir`, so every
// accepted message and every reply goes through SQLite, next to the same steps in memory. Here:
// where the state lives (its file system decides what a commit costs) and how the two runs of one
// build compare.
import { readFileSync, realpathSync } from "node:fs";
import { tmpdir } from "node:os";

/** `\040` and the like in /proc/self/mounts are octal escapes of spaces, tabs and newlines. */
const unescapeMount = (field) =>
  field.replace(/\\([0-7]{3})/g, (_, code) => String.fromCharCode(Number.parseInt(code, 8)));

/**
 * The folder the services' state folders are made in (the OS's temporary folder) and the type of
 * the file system it is on, from /proc/self/mounts (null off Linux). Said in the report because
 * a tmpfs would make every commit a memory copy and flatter the durable run.
 */
export function stateLocation() {
  const folder = realpathSync(tmpdir());
  let fileSystem = null;
  try {
    let longest = -1;
    for (const line of readFileSync("/proc/self/mounts", "utf8").split("\n")) {
      const [, mountPoint, type] = line.split(" ");
      if (type === undefined) continue;
      const point = unescapeMount(mountPoint);
      const inside = point === "/" || folder === point || folder.startsWith(`${point}/`);
      // The innermost mount wins; a later line for the same point is mounted over the earlier.
      if (inside && point.length >= longest) {
        longest = point.length;
        fileSystem = type;
      }
    }
  } catch {
    // No /proc (not Linux): the report says "n/a".
  }
  return { folder, fileSystem };
}

const mean = (values) => (values.length === 0 ? null : values.reduce((sum, value) => sum + value, 0) / values.length);

/**
 * One build's durable run against its run in memory. The ratio is of replies delivered per
 * second, each run's mean over the offered rates both runs stepped through, failed steps
 * included (a step with 503s still delivers what the service could): the same offered load on
 * both sides, so the ratio says how much of the memory run's delivery the durable one keeps.
 * Below the knees both deliver what is offered and the ratio is near 1; it drops when the
 * durable run saturates first. The highest clean rates are compared too, as offered rates (their
 * grid is coarse: 1,000, 5,000, 10,000 msg/s in a quick run). Null when either run is missing.
 */
export function compareDurable(memory, durable) {
  if (!memory || !durable) return null;
  const durableByRate = new Map(durable.steps.map((step) => [step.offered, step]));
  const pairs = memory.steps
    .filter((step) => durableByRate.has(step.offered))
    .map((step) => [step, durableByRate.get(step.offered)]);
  const meanMemory = mean(pairs.map(([step]) => step.deliveredPerSecond ?? 0));
  const meanDurable = mean(pairs.map(([, step]) => step.deliveredPerSecond ?? 0));
  return {
    rates: pairs.map(([step]) => step.offered),
    meanMemory,
    meanDurable,
    ratio: meanMemory ? meanDurable / meanMemory : null,
    highestCleanRateMemory: memory.highestCleanRate,
    highestCleanRateDurable: durable.highestCleanRate,
    cleanRateRatio:
      memory.highestCleanRate && durable.highestCleanRate !== null
        ? durable.highestCleanRate / memory.highestCleanRate
        : null,
  };
}
