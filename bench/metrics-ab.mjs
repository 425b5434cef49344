// `node bench/metrics-ab.mjs [--rounds N] [--rates 5000,7500,10000]`: end to end with the stock
// config (metrics on) and with `observability.metrics: false`, alternating (A B, B A, …) on a
// fresh service each time, so both setups meet the same stretches of a machine whose speed
// drifts. `npm run bench` runs the two once each; this repeats them to see past the noise.
// Prints one line per run: per offered rate, clean or not, replies/s, p99 and service CPU.
// Not part of `npm run bench`; run `npm run build` first.
import { runAlternating } from "./alternating-ab.mjs";

await runAlternating(
  [
    { name: "metrics on", options: {} },
    { name: "metrics off", options: { metrics: false } },
  ],
  "5000,7500,10000",
);
