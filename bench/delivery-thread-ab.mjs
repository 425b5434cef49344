// `node bench/delivery-thread-ab.mjs [--rounds N] [--rates 7500,10000,12500]`: end to end with
// the stock config and with `delivery_thread: true`, alternating (A B, B A, …) on a fresh
// service each time, so both setups meet the same stretches of a machine whose speed drifts.
// Prints one line per run: per offered rate, clean or not, replies/s, p99 and service CPU.
// Not part of `npm run bench`; run `npm run build` first.
import { runAlternating } from "./alternating-ab.mjs";

await runAlternating(
  [
    { name: "stock", options: {} },
    { name: "delivery_thread", options: { deliveryThread: true } },
  ],
  "7500,10000,12500",
);
