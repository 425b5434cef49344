// `npm run bench -- [--quick] [--skip-workerd] [--skip-durable] [--skip-postgres] [--skip-saturation]
// [--baseline <dist/node.js>]`: inbound A/B against bare node:http (and the Worker under workerd
// when it exists), end to end at stepped rates in memory, with a state_dir and on Postgres, the
// same setups saturated (and a bare relay and graphile-worker), memory with a full buffer; prints the tables and
// writes bench/results/<mode>.json, .md and -latency.svg. With --baseline another build runs next
// to this one in the inbound rounds and end to end (in memory and durable), so that a change is
// measured before and after in one run on one machine.
import { mkdir, writeFile } from "node:fs/promises";
import { renderChart } from "./chart.mjs";
import { compareDurable, stateLocation } from "./durable.mjs";
import { compareRows } from "./inbound.mjs";
import { createLoader } from "./loader.mjs";
import { describeMachine } from "./machine.mjs";
import { newSecret } from "./message.mjs";
import { runMetricsCost } from "./metrics-cost.mjs";
import { readOptions, USAGE } from "./options.mjs";
import { comparePostgres, runPostgresPhase } from "./postgres.mjs";
import { backgroundLoad } from "./proc-stats.mjs";
import { evaluateTargets, renderMarkdown, renderTerminal } from "./report.mjs";
import {
  elapsedSeconds,
  endToEndPhase,
  inboundPhase,
  log,
  memoryPhase,
  since,
  withReceiver,
  workerdEndToEndPhase,
} from "./run-phases.mjs";
import { runSaturationPhase } from "./saturation.mjs";
import { prepareWorkerd } from "./workerd.mjs";

const RESULTS = new URL("./results/", import.meta.url);
// Above this share of CPU busy with other work before the start, the run is flagged.
const BUSY = 0.1;

async function writeResults(results) {
  const { mode } = results;
  await mkdir(RESULTS, { recursive: true });
  await writeFile(new URL(`${mode}.json`, RESULTS), `${JSON.stringify(results, null, 2)}\n`);
  await writeFile(new URL(`${mode}.md`, RESULTS), renderMarkdown(results, `${mode}-latency.svg`));
  const series = [{ label: "stock (memory)", steps: results.endToEnd.steps }];
  if (results.endToEndDurable) series.push({ label: "durable (state_dir)", steps: results.endToEndDurable.steps });
  if (results.endToEndThread) series.push({ label: "delivery_thread", steps: results.endToEndThread.steps });
  if (results.endToEndBaseline) {
    series.push({ label: "stock (memory), baseline build", steps: results.endToEndBaseline.steps });
  }
  if (results.endToEndDurableBaseline) {
    series.push({ label: "durable (state_dir), baseline build", steps: results.endToEndDurableBaseline.steps });
  }
  await writeFile(new URL(`${mode}-latency.svg`, RESULTS), renderChart(series));
}

/** The options, or null after a one-line error and exit code 2 (a usage error, not a crash). */
function optionsOrExit(argv) {
  try {
    return readOptions(argv);
  } catch (error) {
    process.stderr.write(`bench: ${error.message}\n`);
    process.exitCode = 2;
    return null;
  }
}

async function main() {
  const options = optionsOrExit(process.argv.slice(2));
  if (options === null) return;
  if (options.help) {
    log(USAGE);
    return;
  }
  const secret = newSecret();
  const machine = describeMachine();
  log(`webhook-channel bench (${options.mode}) on ${machine.cpus} × ${machine.cpuModel}, Node ${machine.node}`);
  if (options.baseline !== null) log(`baseline build: ${options.baseline}`);
  const state = options.skipDurable ? null : stateLocation();
  if (state !== null) log(`durable runs: state_dir in ${state.folder} (${state.fileSystem ?? "file system unknown"})`);
  for (const checkout of options.workerBaselines) log(`baseline Worker: ${checkout}`);
  machine.backgroundLoad = await backgroundLoad();
  if (machine.backgroundLoad !== null && machine.backgroundLoad > BUSY) {
    log(
      `warning: ${Math.round(machine.backgroundLoad * 100)}% of the CPU was busy before the start; expect low, noisy numbers`,
    );
  }

  const loader = createLoader(options);
  const workerd = options.skipWorkerd ? { skipped: "--skip-workerd" } : await prepareWorkerd({ secret, log });
  try {
    const inbound = await inboundPhase(options, loader, secret, workerd);
    const endToEnd = await endToEndPhase(options, secret, { setup: "stock config (memory)" });
    // The four end-to-end runs of the two builds in the order A B | B A (this build in memory,
    // the baseline in memory, the baseline durable, this build durable): on a VM whose speed
    // drifts, the two builds' memory runs are neighbours, so are their durable runs, and both
    // builds sit on average at the same point in time, so neither gets a later (slower or
    // faster) stretch to itself. The price: this build's own memory and durable runs have the
    // baseline's two between them. Without --baseline the durable run follows the memory run.
    const endToEndBaseline =
      options.baseline === null
        ? null
        : await endToEndPhase(options, secret, {
            entry: options.baseline,
            setup: "stock config (memory), baseline build",
          });
    const endToEndDurableBaseline =
      options.baseline === null || options.skipDurable
        ? null
        : await endToEndPhase(options, secret, {
            entry: options.baseline,
            durable: true,
            setup: "durable (state_dir), baseline build",
          });
    const endToEndDurable = options.skipDurable
      ? null
      : await endToEndPhase(options, secret, { durable: true, setup: "durable (state_dir)" });
    // Right after the SQLite run it is compared with: 1 and 2 replicas on one Postgres.
    const postgresRuns = options.skipPostgres
      ? { skipped: "--skip-postgres" }
      : await runPostgresPhase({ options, secret, withReceiver, log: (line) => log(`${line} (${since()})`) });
    // Full load (issue 30): saturation of every setup, the database's cost per message, the round
    // trips, and the no-knee step at twice the clean rates the stepped runs above found.
    const saturation = options.skipSaturation
      ? { skipped: "--skip-saturation" }
      : await runSaturationPhase({
          options,
          secret,
          withReceiver,
          cleanRates: {
            memory: endToEnd.highestCleanRate,
            sqlite: endToEndDurable?.highestCleanRate ?? null,
            postgres: postgresRuns.skipped === null ? postgresRuns.one.highestCleanRate : null,
          },
          log: (line) => log(`${line} (${since()})`),
        });
    // The cost of /metrics (the stock config has it on), on and off alternating.
    log(
      `end to end, /metrics on against off, alternating: ${options.metricsRounds} round(s) at ${options.metricsRates.join(", ")} msg/s (${since()})`,
    );
    const metricsCost = await runMetricsCost({
      rounds: options.metricsRounds,
      rates: options.metricsRates,
      seconds: options.stepSeconds,
      warmupSeconds: options.warmupSeconds,
      log,
    });
    const endToEndThread = options.threadVariant
      ? await endToEndPhase(options, secret, { deliveryThread: true, setup: "delivery_thread: true" })
      : null;
    const workerdEndToEnd = await workerdEndToEndPhase(options, secret, workerd);
    const buffer = await memoryPhase(options, secret, false);
    const bufferThread = options.threadVariant ? await memoryPhase(options, secret, true) : null;
    machine.backgroundLoadAfter = await backgroundLoad();

    const results = {
      mode: options.mode,
      date: new Date().toISOString(),
      durationSeconds: elapsedSeconds(),
      machine,
      options,
      loader: { name: loader.name, description: loader.description },
      inbound,
      workerd: { skipped: workerd.skipped ?? null },
      workerdEndToEnd,
      endToEnd,
      endToEndThread,
      endToEndBaseline,
      endToEndDurable,
      endToEndDurableBaseline,
      // Each build's durable run against its run in memory (see durable.mjs); `skipped` says why
      // there is none.
      durable: options.skipDurable
        ? { skipped: "--skip-durable" }
        : {
            skipped: null,
            state,
            thisBuild: compareDurable(endToEnd, endToEndDurable),
            baseline: compareDurable(endToEndBaseline, endToEndDurableBaseline),
          },
      // postgres_url_env, 1 and 2 replicas, against this build's durable run on SQLite.
      postgres:
        postgresRuns.skipped !== null
          ? { skipped: postgresRuns.skipped }
          : {
              skipped: null,
              one: postgresRuns.one,
              two: postgresRuns.two,
              oneBaseline: postgresRuns.oneBaseline,
              twoBaseline: postgresRuns.twoBaseline,
              oneAgainstSqlite: comparePostgres(endToEndDurable, postgresRuns.one),
              twoAgainstSqlite: comparePostgres(endToEndDurable, postgresRuns.two),
              // This build's replies per second over the baseline's (ratio > 1: this build delivers more).
              oneAgainstBaseline: comparePostgres(postgresRuns.oneBaseline, postgresRuns.one),
              twoAgainstBaseline: comparePostgres(postgresRuns.twoBaseline, postgresRuns.two),
            },
      // Saturation, database cost per message, round trips, no knee (saturation.mjs); `skipped` says why there is none.
      saturation,
      metricsCost,
      // This build's service against the baseline's, per round of the inbound phase.
      baseline:
        options.baseline === null
          ? null
          : { entry: options.baseline, inbound: compareRows(inbound, "service", "service-baseline") },
      buffer,
      bufferThread,
    };
    results.targets = evaluateTargets(results);
    await writeResults(results);
    log("");
    log(renderTerminal(results));
    log(
      `results: bench/results/${options.mode}.{json,md} and ${options.mode}-latency.svg (${results.durationSeconds} s)`,
    );
  } finally {
    await workerd.cleanup?.();
  }
}

await main();
