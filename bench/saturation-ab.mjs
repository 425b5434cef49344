// `node bench/saturation-ab.mjs --baseline /path/to/dist/node.js [--rounds N] [--seconds N]
// [--durable] [--admin]`: this build against another, saturated (the bench's wrk load), in
// memory (with --admin the admin API on, so the message timeline kept) or, with --durable, with
// a state_dir, alternating (A B, B A, …) on fresh services, each run printed with its replies
// per second and the service's CPU per reply, then the means. `bench/timeline-ab.mjs` compares
// the timeline on against off within one build; a change to the timeline is measured here, since
// two builds run apart meet different phases of the VM. Not part of `npm run bench`; run
// `npm run build` first.
import { resolve } from "node:path";
import { parseArgs } from "node:util";
import { newSecret } from "./message.mjs";
import { alternateSaturated } from "./saturation-pair.mjs";
import { startServices } from "./saturation-setups.mjs";

const { values } = parseArgs({
  options: {
    baseline: { type: "string" },
    rounds: { type: "string", default: "4" },
    seconds: { type: "string", default: "8" },
    durable: { type: "boolean", default: false },
    admin: { type: "boolean", default: false },
  },
});
if (values.baseline === undefined) throw new Error("--baseline <other build's dist/node.js> is required");
const baseline = resolve(values.baseline);
const secret = newSecret();
const setup = (key) => ({
  key,
  name: key === "this" ? "this build" : "baseline build",
  start: ({ receiver }) =>
    startServices({
      count: 1,
      secret,
      receiver,
      durable: values.durable,
      admin: values.admin,
      ...(key === "this" ? {} : { entry: baseline }),
    }),
});
const { this: mine, baseline: base } = await alternateSaturated({
  first: setup("baseline"),
  second: setup("this"),
  rounds: Number(values.rounds),
  seconds: Number(values.seconds),
  secret,
});
process.stdout.write(
  `means: this ${Math.round(mine.rate)} vs baseline ${Math.round(base.rate)} replies/s (${(mine.rate / base.rate).toFixed(3)} ×), CPU ${mine.cpu.toFixed(1)} vs ${base.cpu.toFixed(1)} µs/reply\n`,
);
