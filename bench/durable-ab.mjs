// `node bench/durable-ab.mjs --baseline /path/to/dist/node.js [--rounds N] [--rates 2000,4000]
//   [--seconds N]`: end to end with `state_dir` (durable), this build against another,
// alternating (A B, B A, …) on a fresh service and a fresh state_dir each time. `npm run bench`
// runs each build's durable phase once, one after the other, and a durable run leaves the
// disk writing back what it committed while the next one starts; alternating gives both
// builds the same share of that. Without --baseline it alternates durable against memory for
// this build. Prints one line per run. Not part of `npm run bench`; run `npm run build` first.
import { resolve } from "node:path";
import { parseArgs } from "node:util";
import { runAlternating } from "./alternating-ab.mjs";

const { values } = parseArgs({ strict: false, options: { baseline: { type: "string" } } });
const baseline = typeof values.baseline === "string" ? resolve(values.baseline) : undefined;
// runAlternating reads the remaining options strictly, so --baseline is taken out first.
const at = process.argv.findIndex((arg) => arg === "--baseline" || arg.startsWith("--baseline="));
if (at !== -1) process.argv.splice(at, process.argv[at] === "--baseline" ? 2 : 1);

await runAlternating(
  baseline === undefined
    ? [
        { name: "durable", options: { durable: true } },
        { name: "memory", options: {} },
      ]
    : [
        { name: "durable", options: { durable: true } },
        { name: "durable, baseline", options: { durable: true, entry: baseline } },
      ],
  "2000,4000",
);
