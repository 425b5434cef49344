// The no-knee steps of the full-load phase (issue 30): memory, SQLite and one Postgres replica
// each offered twice the highest rate this build delivered cleanly in its stepped run
// (no-knee.mjs). With --baseline the baseline build takes the same step at the same rate next to
// this build's, so a change to the path a refusal takes shows before and after in one run.
import { createDatabase } from "../scripts/postgres-cluster.mjs";
import { runNoKneeStep } from "./no-knee.mjs";
import { int as fmt } from "./report-format.mjs";

/** The no-knee step for one setup, or `{ skipped }` when its stepped run had no clean step. */
async function noKnee({ setup, cleanRate, options, secret, withReceiver, cluster }) {
  if (cleanRate === null || cleanRate === undefined) {
    return { key: setup.key, name: setup.name, build: setup.build, skipped: "its stepped run had no clean step" };
  }
  return withReceiver("answer", async (receiver) => {
    const databaseUrl = setup.database
      ? await createDatabase(cluster.url, `no_knee_${setup.key.replaceAll("-", "_")}_${Date.now().toString(36)}`)
      : undefined;
    const server = await setup.start({ receiver, databaseUrl });
    try {
      const step = await runNoKneeStep({
        server,
        secret,
        receiver,
        cleanRate,
        seconds: options.noKneeSeconds,
        warmupSeconds: options.warmupSeconds,
      });
      return { key: setup.key, name: setup.name, build: setup.build, skipped: null, ...step };
    } finally {
      await server.stop();
    }
  });
}

/**
 * Runs the steps: memory, SQLite (unless --skip-durable) and one Postgres replica (with a
 * cluster), each next to its baseline build's when the phase has one (this build first, then
 * the baseline first, in turn). `setups` are the
 * saturation setups by key; `cleanRates` this build's highest clean stepped rates
 * ({ memory, sqlite, postgres }, null when a run is missing).
 */
export async function runNoKneePhase({ setups, cleanRates, options, secret, withReceiver, cluster, log }) {
  const wanted = [
    ["memory", cleanRates.memory],
    ...(options.skipDurable ? [] : [["sqlite", cleanRates.sqlite]]),
    ...(cluster === null ? [] : [["postgres-1", cleanRates.postgres]]),
  ];
  const steps = [];
  for (const [index, [key, cleanRate]] of wanted.entries()) {
    // A B, then B A: what a step leaves behind (a checkpoint, a busy neighbour) falls on each build in turn.
    const pair = [setups.get(key), setups.get(`${key}-baseline`)];
    for (const setup of index % 2 === 0 ? pair : pair.reverse()) {
      if (setup === undefined) continue;
      log(
        `no knee, ${setup.name}: twice the highest clean rate (${fmt(cleanRate)} msg/s) for ${options.noKneeSeconds} s`,
      );
      const step = await noKnee({ setup, cleanRate, options, secret, withReceiver, cluster });
      steps.push(step);
      if (step.skipped === null) {
        log(
          `  ${fmt(step.deliveredPerSecond)} replies/s (${step.ratio?.toFixed(2) ?? "n/a"} × the clean rate), ` +
            `${fmt(step.accepted)} accepted, ${JSON.stringify(step.refusals)}`,
        );
      }
    }
  }
  return steps;
}
