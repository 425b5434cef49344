// The full-load phase of `npm run bench` (issue 30). Saturation: each setup gets a closed-loop
// load above what it can deliver (wrk, 10 connections in all, the messages spread over 1,000
// conversations), and the replies that reach the receiver per second while it runs are what the
// box delivers when the load exceeds it. The setups: a bare node:http relay (the ceiling), the
// service in memory, with a state_dir (SQLite), on Postgres with 1, 2 and 3 replicas (wrk
// processes, one per replica, the connections split between them), and node:http with
// graphile-worker on the same Postgres (the contender). The Postgres runs also give the database's
// cost per message (postgres-cost.mjs); one replica's round trips per message are counted on an
// idle replica (postgres-round-trips.mjs); then the no-knee steps (no-knee-phase.mjs) offer
// memory, SQLite and one replica twice their highest clean stepped rate.
//
// The Postgres cluster is a private one with the default settings (fsync on) plus
// pg_stat_statements, a fresh database per run. With --baseline the baseline build runs the
// memory, SQLite and 1-replica saturation next to this build's, A B | B A, its round trips
// are counted too, and it takes each no-knee step after this build's, at the same rate.
import { createDatabase, postgresBinDir, startPostgresCluster } from "../scripts/postgres-cluster.mjs";
import { messageBody, messageHeaders } from "./message.mjs";
import { runNoKneePhase } from "./no-knee-phase.mjs";
import { BENCH_CLUSTER, createCostProbe } from "./postgres-cost.mjs";
import { countRoundTrips, startCountingRelay } from "./postgres-round-trips.mjs";
import { busyBetween, cpuSecondsOf, machineCpu, peakRss } from "./proc-stats.mjs";
import { saturationSetups, startServices } from "./saturation-setups.mjs";
import { timelineRatio, timelineRounds } from "./timeline-rounds.mjs";
import { runWrkConversations, wrkAvailable } from "./wrk-load.mjs";

const DRAIN_TIMEOUT_MS = 20_000;
const DRAIN_QUIET_MS = 300;
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** `connections` split over `count` targets as evenly as whole numbers allow (10 over 3: 4, 3, 3). */
const split = (connections, count) =>
  Array.from({ length: count }, (_, index) => Math.floor(connections / count) + (index < connections % count ? 1 : 0));

/** Waits until the receiver has at least `accepted` replies and no more arrive for a moment. */
async function drained(receiver, accepted) {
  const giveUpAt = Date.now() + DRAIN_TIMEOUT_MS;
  let last = -1;
  for (;;) {
    const { count } = await receiver.count();
    if ((count >= accepted && count === last) || Date.now() > giveUpAt) return count;
    last = count;
    await sleep(DRAIN_QUIET_MS);
  }
}

/** One saturation run: `setup` started fresh, loaded, drained and stopped; its numbers (also for scripts that run one setup). */
export async function saturate({ setup, options, secret, withReceiver, cluster, costProbe }) {
  const headers = messageHeaders(secret);
  const body = (conversation) => messageBody(`conv-${conversation}`);
  return withReceiver("answer", async (receiver) => {
    const database = setup.database ? `sat_${setup.key.replaceAll("-", "_")}_${Date.now().toString(36)}` : null;
    const databaseUrl = database === null ? undefined : await createDatabase(cluster.url, database);
    const server = await setup.start({ receiver, databaseUrl });
    let running = true;
    try {
      const costWindow = database === null ? null : await costProbe.open(database);
      const shares = split(options.saturationConnections, server.urls.length);
      const warmupSeconds = setup.warmupSeconds ?? options.saturationWarmupSeconds;
      const seconds = warmupSeconds + options.saturationSeconds + 1;
      const loads = Promise.all(
        server.urls.map((url, index) =>
          runWrkConversations({
            url,
            headers,
            body,
            conversations: options.saturationConversations,
            connections: shares[index],
            seconds,
          }),
        ),
      );
      // Failures surface at the await below, after the window.
      loads.catch(() => undefined);
      await sleep(warmupSeconds * 1000);
      const start = await receiver.count();
      const cpuStart = cpuSecondsOf(server.pids);
      const machineStart = machineCpu();
      await sleep(options.saturationSeconds * 1000);
      const end = await receiver.count();
      const cpuEnd = cpuSecondsOf(server.pids);
      const machineEnd = machineCpu();
      const results = await loads;
      const accepted = results.reduce((sum, result) => sum + result.ok, 0);
      await drained(receiver, accepted);
      const peaks = server.pids.map((pid) => peakRss(pid));
      running = false;
      await server.stop();
      const delivered = (await receiver.count()).count;
      const costs = costWindow === null ? null : await costWindow.close(delivered);
      const windowReplies = end.count - start.count;
      const wrkSeconds = Math.max(...results.map((result) => result.seconds));
      const refusals = {};
      for (const result of results) {
        for (const [key, count] of Object.entries(result.refusals)) refusals[key] = (refusals[key] ?? 0) + count;
      }
      const refused = Object.values(refusals).reduce((sum, count) => sum + count, 0);
      return {
        key: setup.key,
        name: setup.name,
        build: setup.build,
        replicas: setup.replicas ?? null,
        connections: shares,
        warmupSeconds,
        windowSeconds: (end.at - start.at) / 1000,
        repliesPerSecond: windowReplies / ((end.at - start.at) / 1000),
        // Over wrk's whole run, warm-up included: wrk reports its counts only at the end.
        loadSeconds: wrkSeconds,
        acceptedPerSecond: accepted / wrkSeconds,
        refusedPerSecond: refused / wrkSeconds,
        bufferFullPerSecond: (refusals["503 buffer_full"] ?? 0) / wrkSeconds,
        refusals,
        errors: results.reduce((sum, result) => sum + result.errors + result.timeouts, 0),
        acceptP50: results[0].p50,
        acceptP99: Math.max(...results.map((result) => result.p99)),
        cpuMicrosPerReply:
          cpuStart === null || cpuEnd === null || windowReplies === 0
            ? null
            : ((cpuEnd - cpuStart) * 1e6) / windowReplies,
        // Share of all cores busy in the window (load generator, receiver and database included):
        // near 1, the machine was the limit; well below, something waited (a commit, a lock).
        machineBusy: busyBetween(machineStart, machineEnd),
        // The highest of the processes' own peaks (VmHWM over each one's life).
        peakRss: peaks.includes(null) ? null : Math.max(...peaks),
        accepted,
        delivered,
        // Accepted (as wrk counted them) but no reply after the drain: lost, or still queued.
        undelivered: Math.max(0, accepted - delivered),
        costs,
      };
    } finally {
      if (running) await server.stop();
    }
  });
}

/** One replica of `entry` (undefined: this build) on a fresh database reached through the counting relay. */
async function probeRoundTrips({ cluster, entry, secret, withReceiver, messages, sameConversation }) {
  const databaseUrl = await createDatabase(cluster.url, `round_trips_${Date.now().toString(36)}`);
  const relay = await startCountingRelay(cluster.port);
  try {
    const relayed = new URL(databaseUrl);
    relayed.port = String(relay.port);
    return await withReceiver("answer", async (receiver) => {
      const server = await startServices({ count: 1, secret, receiver, entry, postgresUrl: relayed.toString() });
      try {
        return await countRoundTrips({ url: server.urls[0], relay, secret, receiver, messages, sameConversation });
      } finally {
        await server.stop();
      }
    });
  } finally {
    await relay.close();
  }
}

const fmt = (value) => (value === null || value === undefined ? "n/a" : Math.round(value).toLocaleString("en-US"));

/**
 * Runs the phase: the saturation runs, the round-trip count and the no-knee steps. `cleanRates`
 * are the highest clean offered rates of this build's stepped runs ({ memory, sqlite, postgres },
 * null when a run is missing). Returns `{ skipped }` without wrk.
 */
export async function runSaturationPhase({ options, secret, withReceiver, cleanRates, log }) {
  if (!wrkAvailable()) return { skipped: "wrk is not installed (apt-get install wrk)" };
  const postgresSkipped = options.skipPostgres
    ? "--skip-postgres"
    : postgresBinDir() === undefined
      ? "Postgres is not installed (apt-get install -y postgresql)"
      : null;
  const withPostgres = postgresSkipped === null;
  const cluster = withPostgres ? await startPostgresCluster(BENCH_CLUSTER) : null;
  const costProbe = cluster === null ? null : await createCostProbe(cluster);
  try {
    const setups = saturationSetups({ options, secret, withPostgres });
    const runs = [];
    for (const setup of setups) {
      log(
        `saturation, ${setup.name}: wrk, ${options.saturationConnections} connections, ${options.saturationConversations} conversations, ${setup.warmupSeconds ?? options.saturationWarmupSeconds} s + ${options.saturationSeconds} s measured`,
      );
      const run = await saturate({ setup, options, secret, withReceiver, cluster, costProbe });
      runs.push(run);
      log(
        `  ${fmt(run.repliesPerSecond)} replies/s, ${fmt(run.acceptedPerSecond)} accepted/s, ${fmt(run.refusedPerSecond)} refused/s, ` +
          `${fmt(run.cpuMicrosPerReply)} µs CPU/reply` +
          (run.costs ? `, Postgres ${fmt(run.costs.postgresCpuMicrosPerMessage)} µs CPU/msg` : ""),
      );
    }
    const timelineRuns = await timelineRounds({
      setups,
      runs,
      options,
      log,
      measure: (setup) => saturate({ setup, options, secret, withReceiver, cluster, costProbe }),
    });
    let roundTrips = null;
    if (withPostgres) {
      roundTrips = {};
      for (const [build, entry] of [
        ["thisBuild", undefined],
        ...(options.baseline === null ? [] : [["baseline", options.baseline]]),
      ]) {
        roundTrips[build] = {};
        for (const sameConversation of [false, true]) {
          log(
            `round trips to Postgres per message, ${build === "thisBuild" ? "this build" : "baseline build"}: one at a time, ${sameConversation ? "one conversation" : "a new conversation each"}`,
          );
          roundTrips[build][sameConversation ? "same" : "new"] = await probeRoundTrips({
            cluster,
            entry,
            secret,
            withReceiver,
            messages: options.roundTripMessages,
            sameConversation,
          });
        }
      }
    }
    const noKneeSteps = await runNoKneePhase({
      setups: new Map(setups.map((setup) => [setup.key, setup])),
      cleanRates,
      options,
      secret,
      withReceiver,
      cluster,
      log,
    });
    return {
      skipped: null,
      postgresSkipped,
      runs,
      timelineRuns,
      comparisons: compareSaturation(runs, timelineRuns),
      roundTrips,
      noKnee: noKneeSteps,
    };
  } finally {
    await costProbe?.close();
    await cluster?.stop();
  }
}

/**
 * The ratios of replies per second the report and the targets read, each null when a run is
 * missing: a setup against another in the same phase. The timeline's on over off reads the mean
 * of every run of each in `timelineRuns` (see {@link timelineRounds}).
 */
export function compareSaturation(runs, timelineRuns = runs) {
  const rate = (key) => runs.find((run) => run.key === key)?.repliesPerSecond ?? null;
  const over = (a, b) => (rate(a) === null || !rate(b) ? null : rate(a) / rate(b));
  return {
    memoryOverBare: over("memory", "bare"),
    sqliteOverMemory: over("sqlite", "memory"),
    postgresOverSqlite: over("postgres-1", "sqlite"),
    postgresOverGraphile: over("postgres-1", "graphile-worker"),
    twoOverOne: over("postgres-2", "postgres-1"),
    threeOverOne: over("postgres-3", "postgres-1"),
    // The message timeline on over off, in memory and with a state_dir.
    memoryTimelineOverOff: timelineRatio(timelineRuns, "memory-timeline", "memory-timeline-off"),
    sqliteTimelineOverOff: timelineRatio(timelineRuns, "sqlite", "sqlite-timeline-off"),
    // This build over the baseline build, per setup.
    memoryOverBaseline: over("memory", "memory-baseline"),
    sqliteOverBaseline: over("sqlite", "sqlite-baseline"),
    postgresOverBaseline: over("postgres-1", "postgres-1-baseline"),
    twoReplicasOverBaseline: over("postgres-2", "postgres-2-baseline"),
    baselineSqliteOverMemory: over("sqlite-baseline", "memory-baseline"),
    baselinePostgresOverSqlite: over("postgres-1-baseline", "sqlite-baseline"),
  };
}
