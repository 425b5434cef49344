// `node bench/postgres-saturation-ab.mjs --baseline /path/to/dist/node.js [--replicas N] [--rounds N]
//   [--seconds N]`: saturated (the bench's wrk load) on `postgres_url_env`, this build against
// another, alternating (A B, B A, …), each run on fresh replicas and a fresh database of one
// private cluster set up as `npm run bench` sets it (fsync on, `pg_stat_statements`). Prints one
// line per run: replies per second, the replicas' CPU per reply, and what each delivered message
// cost the database (Postgres CPU, statement and planning time, WAL), then the means of each
// build. `bench/postgres-ab.mjs` steps paced rates instead. Not part of `npm run bench`; run
// `npm run build` first.
import { resolve } from "node:path";
import { parseArgs } from "node:util";
import { postgresBinDir, startPostgresCluster } from "../scripts/postgres-cluster.mjs";
import { newSecret } from "./message.mjs";
import { BENCH_CLUSTER, createCostProbe } from "./postgres-cost.mjs";
import { withReceiver } from "./run-phases.mjs";
import { saturate } from "./saturation.mjs";
import { startServices } from "./saturation-setups.mjs";
import { wrkAvailable } from "./wrk-load.mjs";

const { values } = parseArgs({
  options: {
    baseline: { type: "string" },
    replicas: { type: "string", default: "1" },
    rounds: { type: "string", default: "3" },
    seconds: { type: "string", default: "8" },
  },
});
if (values.baseline === undefined)
  throw new Error("usage: node bench/postgres-saturation-ab.mjs --baseline <dist/node.js>");
if (postgresBinDir() === undefined) throw new Error("Postgres is not installed (apt-get install -y postgresql)");
if (!wrkAvailable()) throw new Error("wrk is not installed (Debian package wrk): apt-get install -y wrk");
const replicas = Number(values.replicas);
const builds = [
  { name: "this build", entry: undefined },
  { name: "baseline build", entry: resolve(values.baseline) },
];
// As the bench's saturation phase: several replicas claim the conversations first, then the window opens.
const options = {
  saturationConnections: 10,
  saturationConversations: 1_000,
  saturationWarmupSeconds: replicas > 1 ? 7 : 2,
  saturationSeconds: Number(values.seconds),
};

const secret = newSecret();
const cluster = await startPostgresCluster(BENCH_CLUSTER);
const costProbe = await createCostProbe(cluster);
const runs = new Map(builds.map((build) => [build.name, []]));
const round = (value) => Math.round(value).toLocaleString("en-US");
try {
  for (let index = 0; index < Number(values.rounds); index += 1) {
    for (const build of index % 2 === 0 ? builds : [...builds].reverse()) {
      const setup = {
        key: `ab-${index}`,
        name: build.name,
        database: true,
        start: ({ receiver, databaseUrl }) =>
          startServices({ count: replicas, secret, receiver, entry: build.entry, postgresUrl: databaseUrl }),
      };
      const run = await saturate({ setup, options, secret, withReceiver, cluster, costProbe });
      runs.get(build.name).push(run);
      const { costs } = run;
      process.stdout.write(
        `${build.name}: ${round(run.repliesPerSecond)} replies/s, ${round(run.cpuMicrosPerReply)} µs CPU/reply; ` +
          `Postgres ${round(costs.postgresCpuMicrosPerMessage)} µs CPU, ${round(costs.statementMicrosPerMessage)} µs ` +
          `statements, ${round(costs.planMicrosPerMessage)} µs planning, ${round(costs.walBytesPerMessage)} B WAL per message\n`,
      );
    }
  }
} finally {
  await costProbe.close();
  await cluster.stop();
}
const mean = (list, read) => list.reduce((sum, run) => sum + read(run), 0) / list.length;
for (const [name, list] of runs) {
  process.stdout.write(
    `means, ${name}: ${round(mean(list, (run) => run.repliesPerSecond))} replies/s, ` +
      `Postgres ${round(mean(list, (run) => run.costs.postgresCpuMicrosPerMessage))} µs CPU per message\n`,
  );
}
