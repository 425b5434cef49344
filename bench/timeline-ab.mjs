// `node bench/timeline-ab.mjs [--rounds N] [--seconds N] [--durable] [--entry <dist/node.js>]`: the
// message timeline's cost alone, in memory with the admin API (or, with --durable, with a
// state_dir): the saturation phase's on and off setups, alternating
// (off on, on off, …), each run printed with its replies per second and the service's CPU per
// reply, then the means. Not part of `npm run bench`, whose saturation phase runs the same pair.
import { parseArgs } from "node:util";
import { newSecret } from "./message.mjs";
import { withReceiver } from "./run-phases.mjs";
import { saturate } from "./saturation.mjs";
import { startServices } from "./saturation-setups.mjs";
import { wrkAvailable } from "./wrk-load.mjs";

const { values } = parseArgs({
  options: {
    rounds: { type: "string", default: "4" },
    entry: { type: "string" },
    durable: { type: "boolean", default: false },
    seconds: { type: "string", default: "8" },
  },
});
const options = {
  saturationConnections: 10,
  saturationConversations: 1_000,
  saturationWarmupSeconds: 2,
  saturationSeconds: Number(values.seconds),
};
if (!wrkAvailable()) throw new Error("wrk is not installed (Debian package wrk): apt-get install -y wrk");
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
const runs = { on: [], off: [] };
for (let round = 0; round < Number(values.rounds); round += 1) {
  for (const on of round % 2 === 0 ? [false, true] : [true, false]) {
    const run = await saturate({ setup: setup(on), options, secret, withReceiver });
    runs[run.key].push(run);
    process.stdout.write(
      `${run.name}: ${Math.round(run.repliesPerSecond)} replies/s, ${Math.round(run.cpuMicrosPerReply ?? Number.NaN)} µs CPU/reply\n`,
    );
  }
}
const mean = (list, field) => {
  const values = list.map((run) => run[field]).filter((value) => typeof value === "number");
  return values.reduce((sum, value) => sum + value, 0) / values.length;
};
const [onRate, offRate] = [mean(runs.on, "repliesPerSecond"), mean(runs.off, "repliesPerSecond")];
const [onCpu, offCpu] = [mean(runs.on, "cpuMicrosPerReply"), mean(runs.off, "cpuMicrosPerReply")];
process.stdout.write(
  `means: on ${Math.round(onRate)} vs off ${Math.round(offRate)} replies/s (${(onRate / offRate).toFixed(3)} ×), CPU ${onCpu.toFixed(1)} vs ${offCpu.toFixed(1)} µs/reply (+${(onCpu - offCpu).toFixed(1)})\n`,
);
