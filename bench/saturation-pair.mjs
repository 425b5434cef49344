// Two setups of the service saturated (the bench's wrk load), alternating (A B, B A, …) on fresh
// services so that both meet the same stretches of a machine whose speed drifts. Shared by
// timeline-ab.mjs (the timeline on against off) and saturation-ab.mjs (this build against another).
import { withReceiver } from "./run-phases.mjs";
import { saturate } from "./saturation.mjs";
import { wrkAvailable } from "./wrk-load.mjs";

const mean = (list, field) => {
  const numbers = list.map((run) => run[field]).filter((value) => typeof value === "number");
  return numbers.reduce((sum, value) => sum + value, 0) / numbers.length;
};

/**
 * Runs `first` and `second` (saturation setups: { key, name, start }) `rounds` times each, for
 * `seconds` measured, `first` leading in even rounds; prints each run's replies per second and
 * CPU per reply, then returns the means of each ({ rate, cpu }) by setup key.
 */
export async function alternateSaturated({ first, second, rounds, seconds, secret }) {
  if (!wrkAvailable()) throw new Error("wrk is not installed (Debian package wrk): apt-get install -y wrk");
  const options = {
    saturationConnections: 10,
    saturationConversations: 1_000,
    saturationWarmupSeconds: 2,
    saturationSeconds: seconds,
  };
  const runs = new Map([
    [first.key, []],
    [second.key, []],
  ]);
  for (let round = 0; round < rounds; round += 1) {
    for (const setup of round % 2 === 0 ? [first, second] : [second, first]) {
      const run = await saturate({ setup, options, secret, withReceiver });
      runs.get(setup.key).push(run);
      process.stdout.write(
        `${run.name}: ${Math.round(run.repliesPerSecond)} replies/s, ${Math.round(run.cpuMicrosPerReply ?? Number.NaN)} µs CPU/reply\n`,
      );
    }
  }
  return Object.fromEntries(
    [...runs].map(([key, list]) => [
      key,
      { rate: mean(list, "repliesPerSecond"), cpu: mean(list, "cpuMicrosPerReply") },
    ]),
  );
}
