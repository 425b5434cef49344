// The Postgres phase of `npm run bench` (issue 22): end to end with `postgres_url_env`, one
// replica and then two on one database, against the same build's durable run on SQLite. The
// cluster is a private one (scripts/postgres-cluster.mjs) with Postgres's default settings
// (fsync on) and pg_stat_statements loaded, on this machine's disk, like the SQLite file; each
// run gets a fresh database.
// With two replicas the sender sends each message to the next replica in turn, as a
// round-robin load balancer does, so every conversation crosses replicas: the worst case for
// handing a conversation's messages to the replica that runs it. With --baseline the other
// build runs the same steps, A B | B A (1 replica: this build, then the baseline; 2 replicas:
// the baseline, then this build), each on a fresh database of its own.
import { createDatabase, postgresBinDir, startPostgresCluster } from "../scripts/postgres-cluster.mjs";
import { runEndToEnd } from "./end-to-end.mjs";
import { BENCH_CLUSTER } from "./postgres-cost.mjs";
import { startService } from "./service.mjs";

const mean = (values) => (values.length === 0 ? null : values.reduce((sum, value) => sum + value, 0) / values.length);

/**
 * Runs the Postgres end-to-end runs, 1 then 2 replicas, stepping through `options.durableRates`,
 * for this build and, with `options.baseline`, for the baseline's; `{ skipped }` when Postgres is
 * not installed.
 */
export async function runPostgresPhase({ options, secret, withReceiver, log }) {
  if (postgresBinDir() === undefined) return { skipped: "Postgres is not installed (apt-get install -y postgresql)" };
  // The saturation phase's settings (pg_stat_statements loaded), so that its no-knee step meets
  // the database this phase found the clean rate on.
  const cluster = await startPostgresCluster(BENCH_CLUSTER);
  try {
    const runs = {};
    const builds = [
      { key: "", label: "", entry: undefined },
      ...(options.baseline === null ? [] : [{ key: "Baseline", label: ", baseline build", entry: options.baseline }]),
    ];
    for (const replicas of [1, 2]) {
      for (const build of replicas === 1 ? builds : [...builds].reverse()) {
        log(
          `end to end, postgres_url_env with ${replicas} replica(s)${build.label}: ${options.stepSeconds} s per step`,
        );
        runs[`${replicas}${build.key}`] = await runReplicas({ cluster, replicas, entry: build.entry });
      }
    }
    return {
      skipped: null,
      one: runs["1"],
      two: runs["2"],
      oneBaseline: runs["1Baseline"] ?? null,
      twoBaseline: runs["2Baseline"] ?? null,
    };
  } finally {
    await cluster.stop();
  }

  async function runReplicas({ cluster, replicas, entry }) {
    const databaseUrl = await createDatabase(cluster.url, `bench_${replicas}_${Date.now().toString(36)}`);
    return withReceiver("answer", async (receiver) => {
      const services = [];
      try {
        // One after the other: the first migrates the empty database.
        for (let index = 0; index < replicas; index += 1) {
          services.push(
            await startService({
              secret,
              outboundUrl: receiver.url,
              postgresUrl: databaseUrl,
              ...(entry === undefined ? {} : { entry }),
            }),
          );
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
}

/**
 * Replies per second of `run` against `base` (a Postgres run against the SQLite durable run of
 * the same build, or this build's Postgres run against the baseline's): the mean over the
 * offered rates both stepped through, failed steps included (as compareDurable).
 */
export function comparePostgres(base, run) {
  if (!base || !run) return null;
  const byRate = new Map(run.steps.map((step) => [step.offered, step]));
  const pairs = base.steps.filter((step) => byRate.has(step.offered)).map((step) => [step, byRate.get(step.offered)]);
  const meanBase = mean(pairs.map(([step]) => step.deliveredPerSecond ?? 0));
  const meanRun = mean(pairs.map(([, step]) => step.deliveredPerSecond ?? 0));
  return {
    rates: pairs.map(([step]) => step.offered),
    meanBase,
    meanRun,
    ratio: meanBase ? meanRun / meanBase : null,
  };
}
