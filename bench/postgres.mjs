// The Postgres phase of `npm run bench` (issue 22): end to end with `postgres_url_env`, one
// replica and then two on one database, against the same build's durable run on SQLite. The
// cluster is a private one (scripts/postgres-cluster.mjs) with Postgres's default settings
// (fsync on), on this machine's disk, like the SQLite file; each run gets a fresh database.
// With two replicas the sender sends each message to the next replica in turn, as a
// round-robin load balancer does, so every conversation crosses replicas: the worst case for
// handing a conversation's messages to the replica that runs it.
import { createDatabase, postgresBinDir, startPostgresCluster } from "../scripts/postgres-cluster.mjs";
import { runEndToEnd } from "./end-to-end.mjs";
import { startService } from "./service.mjs";

const mean = (values) => (values.length === 0 ? null : values.reduce((sum, value) => sum + value, 0) / values.length);

/**
 * Runs the Postgres end-to-end runs, 1 then 2 replicas, stepping through `options.durableRates`;
 * `{ skipped }` when Postgres is not installed.
 */
export async function runPostgresPhase({ options, secret, withReceiver, log }) {
  if (postgresBinDir() === undefined) return { skipped: "Postgres is not installed (apt-get install -y postgresql)" };
  const cluster = await startPostgresCluster({ durable: true });
  try {
    const runs = {};
    for (const replicas of [1, 2]) {
      log(`end to end, postgres_url_env with ${replicas} replica(s): ${options.stepSeconds} s per step`);
      const databaseUrl = await createDatabase(cluster.url, `bench_${replicas}_${Date.now().toString(36)}`);
      runs[replicas] = await withReceiver("answer", async (receiver) => {
        const services = [];
        try {
          // One after the other: the first migrates the empty database.
          for (let index = 0; index < replicas; index += 1) {
            services.push(await startService({ secret, outboundUrl: receiver.url, postgresUrl: databaseUrl }));
          }
          return await runEndToEnd({
            urls: services.map((service) => service.url),
            pids: services.map((service) => service.pid),
            secret,
            receiver,
            rates: options.durableRates,
            seconds: options.stepSeconds,
            warmupSeconds: options.warmupSeconds,
            extraAfterFailure: options.extraAfterFailure,
            log,
          });
        } finally {
          await Promise.all(services.map((service) => service.stop()));
        }
      });
    }
    return { skipped: null, one: runs[1], two: runs[2] };
  } finally {
    await cluster.stop();
  }
}

/**
 * Replies per second of a Postgres run against the SQLite durable run of the same build: the
 * mean over the offered rates both stepped through, failed steps included (as compareDurable).
 */
export function comparePostgres(sqlite, postgres) {
  if (!sqlite || !postgres) return null;
  const byRate = new Map(postgres.steps.map((step) => [step.offered, step]));
  const pairs = sqlite.steps.filter((step) => byRate.has(step.offered)).map((step) => [step, byRate.get(step.offered)]);
  const meanSqlite = mean(pairs.map(([step]) => step.deliveredPerSecond ?? 0));
  const meanPostgres = mean(pairs.map(([, step]) => step.deliveredPerSecond ?? 0));
  return {
    rates: pairs.map(([step]) => step.offered),
    meanSqlite,
    meanPostgres,
    ratio: meanSqlite ? meanPostgres / meanSqlite : null,
  };
}
