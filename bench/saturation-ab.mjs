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
import { withReceiver } from "./run-phases.mjs";
import { saturate } from "./saturation.mjs";
import { startServices } from "./saturation-setups.mjs";
import { wrkAvailable } from "./wrk-load.mjs";

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
if (!wrkAvailable()) throw new Error("wrk is not installed (Debian package wrk): apt-get install -y wrk");
const baseline = resolve(values.baseline);
const options = {
  saturationConnections: 10,
  saturationConversations: 1_000,
  saturationWarmupSeconds: 2,
  saturationSeconds: Number(values.seconds),
};
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
const runs = { this: [], baseline: [] };
for (let round = 0; round < Number(values.rounds); round += 1) {
  for (const key of round % 2 === 0 ? ["baseline", "this"] : ["this", "baseline"]) {
    const run = await saturate({ setup: setup(key), options, secret, withReceiver });
    runs[key].push(run);
    process.stdout.write(
      `${run.name}: ${Math.round(run.repliesPerSecond)} replies/s, ${Math.round(run.cpuMicrosPerReply ?? Number.NaN)} µs CPU/reply\n`,
    );
  }
}
const mean = (list, field) => {
  const numbers = list.map((run) => run[field]).filter((value) => typeof value === "number");
  return numbers.reduce((sum, value) => sum + value, 0) / numbers.length;
};
const [thisRate, baseRate] = [mean(runs.this, "repliesPerSecond"), mean(runs.baseline, "repliesPerSecond")];
const [thisCpu, baseCpu] = [mean(runs.this, "cpuMicrosPerReply"), mean(runs.baseline, "cpuMicrosPerReply")];
process.stdout.write(
  `means: this ${Math.round(thisRate)} vs baseline ${Math.round(baseRate)} replies/s (${(thisRate / baseRate).toFixed(3)} ×), CPU ${thisCpu.toFixed(1)} vs ${baseCpu.toFixed(1)} µs/reply\n`,
);
