// The /metrics cost phase of `npm run bench`: the stock config (metrics on) against
// `observability.metrics: false`, alternating on fresh services at rates that load the service,
// so that both settings meet the same stretches of a machine whose speed drifts. One run of
// each, one after the other, differed by more than the cost being measured on this VM.
import { alternate, runLine } from "./alternating-ab.mjs";

export const METRICS_ON = "metrics on";
export const METRICS_OFF = "metrics off";

/**
 * Runs the two settings for `rounds` rounds at `rates`; returns the runs and, per setting, the
 * mean replies/s over every step of every round (saturated steps included: what is compared
 * is how much the service delivers, whether or not it refused some).
 */
export async function runMetricsCost({ rounds, rates, seconds, warmupSeconds, log }) {
  const runs = await alternate({
    setups: [
      { name: METRICS_ON, options: {} },
      { name: METRICS_OFF, options: { metrics: false } },
    ],
    rounds,
    rates,
    seconds,
    warmupSeconds,
    onRun: (run) => log(`  ${runLine(run)}`),
  });
  const mean = (name) => {
    const values = runs
      .filter((run) => run.setup === name)
      .flatMap((run) => run.steps.map((step) => step.deliveredPerSecond ?? 0));
    return values.length === 0 ? null : values.reduce((sum, value) => sum + value, 0) / values.length;
  };
  return { rounds, rates, seconds, runs, meanOn: mean(METRICS_ON), meanOff: mean(METRICS_OFF) };
}
