// `node bench/postgres-ab.mjs --baseline /path/to/dist/node.js [--replicas N] [--rounds N]
//   [--rates 2000,3000] [--seconds N]`: end to end with `postgres_url_env`, this build against
// another, alternating (A B, B A, …), each run on fresh replicas and a fresh database in one
// private cluster with Postgres's default settings (fsync on), as `npm run bench` runs it; with
// several replicas the sender gives each message to the next one in turn. One run each in
// `npm run bench` cannot tell a step at the knee from the machine's drift; this can. Prints one
// line per run. Not part of `npm run bench`; run `npm run build` first.
import { resolve } from "node:path";
import { parseArgs } from "node:util";
import { createDatabase, postgresBinDir, startPostgresCluster } from "../scripts/postgres-cluster.mjs";
import { runLine } from "./alternating-ab.mjs";
import { runEndToEnd } from "./end-to-end.mjs";
import { newSecret } from "./message.mjs";
import { startReceiver } from "./receiver-client.mjs";
import { startService } from "./service.mjs";

const { values } = parseArgs({
  options: {
    baseline: { type: "string" },
    replicas: { type: "string", default: "1" },
    rounds: { type: "string", default: "3" },
    rates: { type: "string", default: "2000,3000" },
    seconds: { type: "string", default: "5" },
  },
});
if (values.baseline === undefined) throw new Error("usage: node bench/postgres-ab.mjs --baseline <dist/node.js>");
if (postgresBinDir() === undefined) throw new Error("Postgres is not installed (apt-get install -y postgresql)");
const replicas = Number(values.replicas);
const rounds = Number(values.rounds);
const rates = values.rates.split(",").map(Number);
const setups = [
  { name: `postgres ×${replicas}`, entry: undefined },
  { name: `postgres ×${replicas}, baseline`, entry: resolve(values.baseline) },
];

const secret = newSecret();
const cluster = await startPostgresCluster({ durable: true });
const receiver = await startReceiver("answer");
const runs = [];
try {
  for (let round = 0; round < rounds; round += 1) {
    for (const setup of round % 2 === 0 ? setups : [...setups].reverse()) {
      const postgresUrl = await createDatabase(cluster.url, `ab_${runs.length}_${Date.now().toString(36)}`);
      const services = [];
      try {
        // One after the other: the first migrates the empty database.
        for (let index = 0; index < replicas; index += 1) {
          const options = { secret, outboundUrl: receiver.url, postgresUrl };
          services.push(await startService(setup.entry === undefined ? options : { ...options, entry: setup.entry }));
        }
        const { steps } = await runEndToEnd({
          urls: services.map((service) => service.url),
          pids: services.map((service) => service.pid),
          secret,
          receiver,
          rates,
          seconds: Number(values.seconds),
          warmupSeconds: 3,
          extraAfterFailure: rates.length,
          log: () => undefined,
        });
        const run = { round: round + 1, setup: setup.name, steps };
        runs.push(run);
        process.stdout.write(`${runLine(run)}\n`);
      } finally {
        await Promise.all(services.map((service) => service.stop()));
      }
    }
  }
} finally {
  await receiver.stop();
  await cluster.stop();
}
