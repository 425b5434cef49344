// `node bench/timeline-ab.mjs [--rounds N] [--seconds N] [--durable] [--entry <dist/node.js>]`: the
// message timeline's cost alone, in memory with the admin API (or, with --durable, with a
// state_dir): the saturation phase's on and off setups, alternating
// (off on, on off, …), each run printed with its replies per second and the service's CPU per
// reply, then the means. Not part of `npm run bench`, whose saturation phase runs the same pair.
import { parseArgs } from "node:util";
import { newSecret } from "./message.mjs";
import { alternateSaturated } from "./saturation-pair.mjs";
import { startServices } from "./saturation-setups.mjs";

const { values } = parseArgs({
  options: {
    rounds: { type: "string", default: "4" },
    entry: { type: "string" },
    durable: { type: "boolean", default: false },
    seconds: { type: "string", default: "8" },
  },
});
const secret = newSecret();
const setup = (on) => ({
  key: on ? "on" : "off",
  name: on ? "timeline kept" : "timeline.retention_hours 0",
  start: ({ receiver }) =>
    startServices({
      count: 1,
      secret,
      receiver,
      ...(values.durable ? { durable: true } : { admin: true }),
      ...(values.entry === undefined ? {} : { entry: values.entry }),
      ...(on ? {} : { timeline: "off" }),
    }),
});
const means = await alternateSaturated({
  first: setup(false),
  second: setup(true),
  rounds: Number(values.rounds),
  seconds: Number(values.seconds),
  secret,
});
const { on, off } = means;
process.stdout.write(
  `means: on ${Math.round(on.rate)} vs off ${Math.round(off.rate)} replies/s (${(on.rate / off.rate).toFixed(3)} ×), CPU ${on.cpu.toFixed(1)} vs ${off.cpu.toFixed(1)} µs/reply (+${(on.cpu - off.cpu).toFixed(1)})\n`,
);
