// The setups the saturation phase loads (saturation.mjs), in the order they run: the bare relay,
// the service in memory, with a state_dir and on Postgres (this build and the baseline build, A B
// | B A), and the graphile-worker contender.
import { fileURLToPath } from "node:url";
import { startChild } from "./child-process.mjs";
import { startService } from "./service.mjs";

const BARE_ENTRY = fileURLToPath(new URL("./bare-end-to-end-server.mjs", import.meta.url));
const GRAPHILE_ENTRY = fileURLToPath(new URL("./graphile-contender.mjs", import.meta.url));

/** One service process, or several replicas on one database (started one after the other: the first migrates). */
export async function startServices({ count, secret, receiver, entry, durable = false, postgresUrl, admin, timeline }) {
  const services = [];
  try {
    for (let index = 0; index < count; index += 1) {
      services.push(
        await startService({
          secret,
          outboundUrl: receiver.url,
          durable,
          admin,
          timeline,
          ...(postgresUrl === undefined ? {} : { postgresUrl }),
          ...(entry === undefined ? {} : { entry }),
        }),
      );
    }
  } catch (error) {
    await Promise.all(services.map((service) => service.stop()));
    throw error;
  }
  return {
    urls: services.map((service) => service.url),
    pids: services.map((service) => service.pid),
    stop: () => Promise.all(services.map((service) => service.stop())),
  };
}

/** A single child process (the bare relay, the graphile-worker contender) in the shape of startServices. */
async function startOne(name, args, env) {
  const child = await startChild(name, args, { env });
  return { urls: [child.url], pids: [child.pid], stop: () => child.stop() };
}

/**
 * The setups of the saturation runs, in the order they run. `build` is "this" or "baseline" for
 * the service, null for the others; `database` says the setup needs a fresh Postgres database.
 */
export function saturationSetups({ options, secret, withPostgres }) {
  const builds = { this: undefined, baseline: options.baseline ?? undefined };
  const label = (build) => (build === "baseline" ? ", baseline build" : "");
  const memory = (build) => ({
    key: `memory${build === "baseline" ? "-baseline" : ""}`,
    name: `service, in memory${label(build)}`,
    build,
    start: ({ receiver }) => startServices({ count: 1, secret, receiver, entry: builds[build] }),
  });
  const sqlite = (build) => ({
    key: `sqlite${build === "baseline" ? "-baseline" : ""}`,
    name: `service, state_dir (SQLite)${label(build)}`,
    build,
    start: ({ receiver }) => startServices({ count: 1, secret, receiver, entry: builds[build], durable: true }),
  });
  // The cost of the message timeline: in memory it is kept only with the admin API, so its on
  // and off runs both have the admin API (whose own cost the memory run beside them shows); with
  // a state_dir it is on unless its retention is 0.
  const memoryTimeline = (on) => ({
    key: on ? "memory-timeline" : "memory-timeline-off",
    name: `service, in memory, admin API on, ${on ? "message timeline kept" : "timeline.retention_hours 0"}`,
    build: "this",
    start: ({ receiver }) =>
      startServices({ count: 1, secret, receiver, admin: true, ...(on ? {} : { timeline: "off" }) }),
  });
  const sqliteNoTimeline = {
    key: "sqlite-timeline-off",
    name: "service, state_dir (SQLite), timeline.retention_hours 0",
    build: "this",
    start: ({ receiver }) => startServices({ count: 1, secret, receiver, durable: true, timeline: "off" }),
  };
  const postgres = (replicas, build) => ({
    key: `postgres-${replicas}${build === "baseline" ? "-baseline" : ""}`,
    name: `service, postgres_url_env, ${replicas} replica${replicas === 1 ? "" : "s"}${label(build)}`,
    build,
    replicas,
    database: true,
    warmupSeconds: replicas > 1 ? options.saturationReplicaWarmupSeconds : options.saturationWarmupSeconds,
    start: ({ receiver, databaseUrl }) =>
      startServices({ count: replicas, secret, receiver, entry: builds[build], postgresUrl: databaseUrl }),
  });
  const bare = {
    key: "bare",
    name: "bare node:http + undici (in memory, the ceiling)",
    build: null,
    start: ({ receiver }) =>
      startOne("bare end-to-end server", [BARE_ENTRY, "--outbound", receiver.url], { BENCH_SECRET: secret }),
  };
  const graphile = {
    key: "graphile-worker",
    name: "node:http + graphile-worker (queue per conversation)",
    build: null,
    database: true,
    start: ({ receiver, databaseUrl }) =>
      startOne("graphile-worker contender", [GRAPHILE_ENTRY, "--outbound", receiver.url], {
        BENCH_SECRET: secret,
        BENCH_DATABASE_URL: databaseUrl,
      }),
  };
  const withBaseline = options.baseline !== null;
  const pairs = (make, reversed) => {
    if (!withBaseline) return [make("this")];
    return reversed ? [make("baseline"), make("this")] : [make("this"), make("baseline")];
  };
  // A B | B A: the builds' memory runs are neighbours, so are their SQLite runs and their
  // 1-replica runs, and this build's SQLite run sits next to its 1-replica run (the two that one
  // target compares); the contender follows, then the runs with more replicas (two of each
  // build, which share their conversations differently).
  const order = [bare, ...pairs(memory, false), memoryTimeline(false), memoryTimeline(true)];
  if (!options.skipDurable) order.push(sqliteNoTimeline, ...pairs(sqlite, true));
  if (withPostgres) {
    order.push(...pairs((build) => postgres(1, build), false), graphile);
    for (const replicas of options.saturationReplicas.filter((count) => count > 1))
      order.push(...(replicas === 2 ? pairs((build) => postgres(2, build), true) : [postgres(replicas, "this")]));
  }
  return order;
}
