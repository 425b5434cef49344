// `node bench/memory-ab.mjs --baseline /path/to/dist/node.js [--rounds N] [--rates 3000,4000]
//   [--seconds N]`: end to end in memory (the stock config), this build against another,
// alternating (A B, B A, …) on a fresh service each time. `npm run bench` runs each build's
// memory phase once, one after the other, and on a shared VM one run can land in a slower
// stretch than the other; alternating gives both builds the same share of it. Prints one line
// per run. Not part of `npm run bench`; run `npm run build` first.
import { resolve } from "node:path";
import { parseArgs } from "node:util";
import { runAlternating } from "./alternating-ab.mjs";

const { values } = parseArgs({ strict: false, options: { baseline: { type: "string" } } });
if (typeof values.baseline !== "string") {
  process.stderr.write(
    "usage: node bench/memory-ab.mjs --baseline <dist/node.js> [--rounds N] [--rates a,b] [--seconds N]\n",
  );
  process.exit(2);
}
const baseline = resolve(values.baseline);
// runAlternating reads the remaining options strictly, so --baseline is taken out first.
const at = process.argv.findIndex((arg) => arg === "--baseline" || arg.startsWith("--baseline="));
if (at !== -1) process.argv.splice(at, process.argv[at] === "--baseline" ? 2 : 1);

await runAlternating(
  [
    { name: "memory", options: {} },
    { name: "memory, baseline", options: { entry: baseline } },
  ],
  "3000,4000",
);
