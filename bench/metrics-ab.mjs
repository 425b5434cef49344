// `node bench/metrics-ab.mjs [--rounds N] [--rates 5000,7500,10000] [--seconds N]
//   [--baseline /path/to/dist/node.js]`: end to end with the stock config (metrics on) and with
// `observability.metrics: false`, alternating (A B, B A, …) on a fresh service each time, so
// both setups meet the same stretches of a machine whose speed drifts. `npm run bench` runs the
// two once each; this repeats them to see past the noise. With `--baseline`, a third setup runs
// another build (an older commit's dist/, next to a node_modules it can import) with metrics on,
// in the same alternation, so a change to the metrics is measured before and after in one run.
// Prints one line per run: per offered rate, clean or not, replies/s, p99 and service CPU.
// Not part of `npm run bench`; run `npm run build` first.
import { resolve } from "node:path";
import { parseArgs } from "node:util";
import { runAlternating } from "./alternating-ab.mjs";

const { values } = parseArgs({ strict: false, options: { baseline: { type: "string" } } });
const baseline = typeof values.baseline === "string" ? resolve(values.baseline) : undefined;
// runAlternating reads the remaining options strictly, so --baseline is taken out first.
const at = process.argv.findIndex((arg) => arg === "--baseline" || arg.startsWith("--baseline="));
if (at !== -1) process.argv.splice(at, process.argv[at] === "--baseline" ? 2 : 1);

await runAlternating(
  [
    { name: "metrics on", options: {} },
    { name: "metrics off", options: { metrics: false } },
    ...(baseline === undefined ? [] : [{ name: "on, baseline", options: { entry: baseline } }]),
  ],
  "5000,7500,10000",
);
