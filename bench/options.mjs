// Command-line options of `npm run bench -- [--quick] [--skip-workerd] [--skip-durable] [--skip-postgres]
// [--skip-saturation] [--baseline <dist/node.js>]` and the two presets.
import { statSync } from "node:fs";
import { resolve } from "node:path";
import { parseArgs } from "node:util";

const FULL_RATES = [500, 1_000, 2_000, 3_000, 4_000, 5_000, 6_000, 7_500, 10_000, 12_500, 15_000, 20_000, 25_000];

const PRESETS = {
  // About two minutes on a 2-core box, build included: fewer rounds, shorter steps.
  quick: {
    rounds: 3,
    warmupRequests: 10_000,
    requests: 40_000,
    warmupMaxSeconds: 2,
    measureMaxSeconds: 4,
    wrkWarmupSeconds: 1,
    wrkSeconds: 1,
    slices: 1,
    sameTwice: false,
    // The end-to-end steps again with delivery_thread: true; left out to stay under a minute.
    threadVariant: false,
    connections: 10,
    rates: [1_000, 5_000, 10_000, 15_000, 20_000],
    // The end-to-end steps again with a state_dir (SQLite): the first three rates of `rates`
    // only, so the phase stays about 10 s per build, and the same rates as the stock run so that
    // the two can be compared step for step.
    durableRates: [1_000, 5_000, 10_000],
    // /metrics on against off, alternating: one round of each, at a rate that loads the service.
    metricsRounds: 1,
    metricsRates: [5_000],
    stepSeconds: 2,
    warmupSeconds: 1,
    extraAfterFailure: 0,
    bufferRate: 2_500,
    // End to end through workerd: one burst per Worker.
    workerdMessages: 1_000,
    workerdConversations: 100,
    workerdRounds: 1,
    // Saturation (saturation.mjs): short windows, one replica only.
    saturationConnections: 10,
    saturationConversations: 1_000,
    saturationWarmupSeconds: 1,
    saturationReplicaWarmupSeconds: 1,
    saturationSeconds: 2,
    saturationReplicas: [1],
    timelineRounds: 1,
    roundTripMessages: 10,
    noKneeSeconds: 3,
  },
  // More rounds rather than longer ones: both inbound servers keep every message they accept
  // (see inbound.mjs), and a heap of several hundred thousand messages would make the
  // comparison about garbage collection of a buffer far larger than any real one.
  full: {
    rounds: 9,
    warmupRequests: 20_000,
    requests: 60_000,
    warmupMaxSeconds: 3,
    measureMaxSeconds: 10,
    wrkWarmupSeconds: 1,
    // Per slice: each contender is measured 2 × 1 s per round (see inbound.mjs).
    wrkSeconds: 1,
    slices: 2,
    // A second bare process as a contender: its ratio to bare is the noise floor of the run.
    sameTwice: true,
    threadVariant: true,
    connections: 10,
    rates: FULL_RATES,
    // The same steps as the stock run; the durable run stops at its own knee (plus one step).
    durableRates: FULL_RATES,
    // /metrics on against off, alternating A B | B A: four rounds of each at the knee of the
    // stock config on this machine, where a cost would show as fewer replies per second.
    metricsRounds: 4,
    metricsRates: [6_000, 7_500],
    stepSeconds: 5,
    warmupSeconds: 3,
    extraAfterFailure: 1,
    bufferRate: 2_500,
    workerdMessages: 3_000,
    workerdConversations: 100,
    workerdRounds: 3,
    // Saturation: wrk as in issue 30 (10 connections, 1,000 conversations); 2 s to fill the
    // buffers and reach the steady state, then 8 s measured; 1, 2 and 3 replicas on Postgres.
    // Several replicas claim the 1,000 conversations at first, each claimed by whichever
    // replica stores its first message, which takes them some seconds: their window opens after.
    saturationConnections: 10,
    saturationConversations: 1_000,
    saturationWarmupSeconds: 2,
    saturationReplicaWarmupSeconds: 7,
    saturationSeconds: 8,
    saturationReplicas: [1, 2, 3],
    // The timeline's cost is near this machine's run-to-run spread, so its on and off runs
    // come back for more rounds, alternating, and the target reads their means.
    timelineRounds: 4,
    roundTripMessages: 40,
    noKneeSeconds: 8,
  },
};

export function readOptions(argv) {
  const { values } = parseArgs({
    args: argv,
    options: {
      quick: { type: "boolean", default: false },
      "skip-workerd": { type: "boolean", default: false },
      "skip-durable": { type: "boolean", default: false },
      "skip-postgres": { type: "boolean", default: false },
      "skip-saturation": { type: "boolean", default: false },
      load: { type: "string", default: "auto" },
      baseline: { type: "string" },
      "worker-baseline": { type: "string", multiple: true },
      help: { type: "boolean", short: "h", default: false },
    },
    strict: true,
  });
  const mode = values.quick ? "quick" : "full";
  if (!["auto", "wrk", "autocannon"].includes(values.load)) {
    throw new Error(`--load ${values.load}: use auto, wrk or autocannon`);
  }
  return {
    mode,
    help: values.help,
    skipWorkerd: values["skip-workerd"],
    skipDurable: values["skip-durable"],
    skipPostgres: values["skip-postgres"],
    skipSaturation: values["skip-saturation"],
    load: values.load,
    baseline: values.baseline === undefined ? null : baselineEntry(values.baseline),
    workerBaselines: (values["worker-baseline"] ?? []).map(workerCheckout),
    ...PRESETS[mode],
  };
}

/**
 * The absolute path of `--baseline`, checked up front: a wrong path would otherwise surface
 * only once the first round has started servers, as startService's "run npm run build first".
 */
function baselineEntry(path) {
  const entry = resolve(path);
  const stats = statSync(entry, { throwIfNoEntry: false });
  if (stats === undefined) throw new Error(`--baseline ${entry}: no such file (build one first: see bench/README.md)`);
  if (!stats.isFile()) throw new Error(`--baseline ${entry}: not a file; give the other build's dist/node.js`);
  return entry;
}

/** The absolute path of `--worker-baseline`: a checkout with a wrangler.toml and a Worker. */
function workerCheckout(path) {
  const root = resolve(path);
  const stats = statSync(resolve(root, "wrangler.toml"), { throwIfNoEntry: false });
  if (stats === undefined) {
    throw new Error(`--worker-baseline ${root}: no wrangler.toml there; give a checkout (see bench/README.md)`);
  }
  return root;
}

export const USAGE = `usage: npm run bench -- [--quick] [--skip-workerd] [--skip-durable] [--skip-postgres] [--skip-saturation]
                       [--load auto|wrk|autocannon] [--baseline <path>] [--worker-baseline <checkout>]...
  --quick         short run (about two minutes): 3 inbound rounds of 1 s, 2 s steps, stock config and
                  durable (state_dir) at up to 3 rates, no delivery_thread run, no second bare
                  process; results in bench/results/quick.*
  --skip-workerd  leave out the Worker under workerd
  --skip-durable  leave out the end-to-end steps with a state_dir (SQLite), of this build and of
                  --baseline's
  --skip-postgres leave out the end-to-end steps with postgres_url_env (1 and 2 replicas on a
                  private Postgres cluster; skipped by themselves when Postgres is not installed),
                  and the Postgres part of the saturation phase (replicas, graphile-worker,
                  database cost, round trips)
  --skip-saturation leave out the full-load phase: saturation (wrk above capacity: bare relay,
                  memory, state_dir, Postgres with 1, 2, 3 replicas, graphile-worker), the database
                  cost per message, the round trips and the no-knee step; without wrk it is skipped
  --load          inbound load generator: wrk when installed (auto, the default), or autocannon
  --baseline      another build's dist/node.js (an earlier commit, say) to compare with in the same
                  run: an inbound row "service, baseline build" and the end-to-end steps once more
                  on it, in memory and durable; see bench/README.md for building one in a git worktree
  --worker-baseline  another checkout (a git worktree of an earlier commit, say) whose Worker runs
                  end to end through workerd next to this one, with its own wrangler.toml; give it
                  more than once to measure several checkouts in the same run
A full run (9 rounds of 2 × 1 s slices, a second bare process as the noise yardstick, end to end
also with delivery_thread: true) takes about 5 minutes, plus the durable steps (5 s each, up to
the durable run's first failed step and one more, per build); results in bench/results/full.*`;
