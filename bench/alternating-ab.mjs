// Two setups of the service end to end, alternating (A B, B A, …) on a fresh service each time,
// so both meet the same stretches of a machine whose speed drifts. Shared by
// delivery-thread-ab.mjs and metrics-ab.mjs.
import { parseArgs } from "node:util";
import { runEndToEnd } from "./end-to-end.mjs";
import { newSecret } from "./message.mjs";
import { startReceiver } from "./receiver-client.mjs";
import { startService } from "./service.mjs";

/**
 * Reads `--rounds`, `--rates` and `--seconds`, then runs `setups` ([{ name, options }], where
 * `options` go to startService) in alternating order. Prints one line per run: per offered
 * rate, clean or not, replies/s, p99 and service CPU; then the clean steps of each setup.
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
  const seconds = Number(values.seconds);
  const secret = newSecret();
  const receiver = await startReceiver("answer");
  const cleanCount = new Map();
  try {
    for (let round = 0; round < rounds; round += 1) {
      for (const setup of round % 2 === 0 ? setups : [...setups].reverse()) {
        const service = await startService({ secret, outboundUrl: receiver.url, ...setup.options });
        try {
          // Every rate is stepped through, failed or not, so both setups get the same steps.
          const { steps } = await runEndToEnd({
            url: service.url,
            pid: service.pid,
            secret,
            receiver,
            rates,
            seconds,
            warmupSeconds: 3,
            extraAfterFailure: rates.length,
            log: () => undefined,
          });
          const cells = steps.map((step) => {
            const key = `${setup.name} ${step.offered}`;
            cleanCount.set(key, (cleanCount.get(key) ?? 0) + (step.clean ? 1 : 0));
            return (
              `${step.offered}/s ${step.clean ? "clean" : "NOT clean"}: ${Math.round(step.deliveredPerSecond ?? 0)} replies/s, ` +
              `p99 ${step.p99 === null ? "n/a" : step.p99.toFixed(1)} ms, ${Math.round(step.serviceCpuMicrosPerMessage ?? 0)} µs/msg`
            );
          });
          process.stdout.write(`round ${round + 1} ${setup.name.padEnd(15)} ${cells.join(" | ")}\n`);
        } finally {
          await service.stop();
        }
      }
    }
  } finally {
    await receiver.stop();
  }
  for (const { name } of setups) {
    const counts = rates.map((rate) => `${rate}/s ${cleanCount.get(`${name} ${rate}`) ?? 0} of ${rounds}`);
    process.stdout.write(`clean steps, ${name}: ${counts.join(", ")}\n`);
  }
}
