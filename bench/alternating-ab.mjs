// Setups of the service end to end, alternating (A B, B A, …) on a fresh service each time,
// so all meet the same stretches of a machine whose speed drifts. Shared by
// delivery-thread-ab.mjs, metrics-ab.mjs and the /metrics cost phase of `npm run bench`.
import { parseArgs } from "node:util";
import { runEndToEnd } from "./end-to-end.mjs";
import { newSecret } from "./message.mjs";
import { startReceiver } from "./receiver-client.mjs";
import { startService } from "./service.mjs";

/**
 * Runs `setups` ([{ name, options }], where `options`, or what the function `options` resolves
 * to for each run, go to startService) for `rounds` rounds
 * in alternating order, each through every rate in `rates` for `seconds` per step, failed or
 * not, so all setups get the same steps. Calls `onRun({ round, setup, steps })` after each run
 * and returns every run in that shape.
 */
export async function alternate({ setups, rounds, rates, seconds, warmupSeconds = 3, onRun = () => undefined }) {
  const secret = newSecret();
  const receiver = await startReceiver("answer");
  const runs = [];
  try {
    for (let round = 0; round < rounds; round += 1) {
      for (const setup of round % 2 === 0 ? setups : [...setups].reverse()) {
        // A setup's options may be made afresh per run (a fresh database, say).
        const options = typeof setup.options === "function" ? await setup.options() : setup.options;
        const service = await startService({ secret, outboundUrl: receiver.url, ...options });
        try {
          const { steps } = await runEndToEnd({
            url: service.url,
            pid: service.pid,
            secret,
            receiver,
            rates,
            seconds,
            warmupSeconds,
            extraAfterFailure: rates.length,
            log: () => undefined,
          });
          const run = { round: round + 1, setup: setup.name, steps };
          runs.push(run);
          onRun(run);
        } finally {
          await service.stop();
        }
      }
    }
  } finally {
    await receiver.stop();
  }
  return runs;
}

/** One run as a line: per offered rate, clean or not, replies/s, p50, p99 and service CPU. */
export function runLine(run) {
  const cells = run.steps.map(
    (step) =>
      `${step.offered}/s ${step.clean ? "clean" : "NOT clean"}: ${Math.round(step.deliveredPerSecond ?? 0)} replies/s, ` +
      `p50 ${step.p50 === null ? "n/a" : step.p50.toFixed(1)} ms, p99 ${step.p99 === null ? "n/a" : step.p99.toFixed(1)} ms, ` +
      `${Math.round(step.serviceCpuMicrosPerMessage ?? 0)} µs/msg`,
  );
  return `round ${run.round} ${run.setup.padEnd(15)} ${cells.join(" | ")}`;
}

/**
 * The command line of the A/B scripts: reads `--rounds`, `--rates` and `--seconds`, runs
 * `setups` alternating, prints one line per run, then the clean steps of each setup.
 */
export async function runAlternating(setups, defaultRates) {
  const { values } = parseArgs({
    options: {
      rounds: { type: "string", default: "3" },
      rates: { type: "string", default: defaultRates },
      seconds: { type: "string", default: "5" },
    },
  });
  const rounds = Number(values.rounds);
  const rates = values.rates.split(",").map(Number);
  const runs = await alternate({
    setups,
    rounds,
    rates,
    seconds: Number(values.seconds),
    onRun: (run) => process.stdout.write(`${runLine(run)}\n`),
  });
  for (const { name } of setups) {
    const counts = rates.map((rate) => {
      const clean = runs.filter(
        (run) => run.setup === name && run.steps.some((step) => step.offered === rate && step.clean),
      ).length;
      return `${rate}/s ${clean} of ${rounds}`;
    });
    process.stdout.write(`clean steps, ${name}: ${counts.join(", ")}\n`);
  }
}
