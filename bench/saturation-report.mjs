// The saturation phase in the report (issue 30): its tables, and its targets with PASS/FAIL.
import { noKneeLines, noKneeTargets } from "./no-knee-report.mjs";
import { mb } from "./proc-stats.mjs";
import { int, table, ratio as two } from "./report-format.mjs";
import { timelineMeans, timelineRoundLines } from "./timeline-rounds.mjs";

export const SATURATION_TARGETS = {
  durableOverMemory: 0.9,
  noKneeRatio: 0.9,
  postgresCpuMicrosPerMessage: 100,
  postgresOverSqlite: 0.5,
  postgresOverGraphile: 2.5,
  timelineOverOff: 0.95,
};

const three = (value) => (value === null || value === undefined ? "n/a" : value.toFixed(3));

/** Refusals other than 503 buffer_full, plus errors and timeouts: what must stay 0. */
const otherText = (run) => {
  const other = Object.entries(run.refusals ?? {})
    .filter(([key]) => key !== "503 buffer_full")
    .reduce((sum, [, count]) => sum + count, 0);
  return `${int(other)} / ${int(run.errors)}`;
};

function saturationTable(runs) {
  const bare = runs.find((run) => run.key === "bare")?.repliesPerSecond ?? null;
  return table(
    [
      "setup",
      "replies/s",
      "× bare",
      "accepted/s",
      "503 buffer_full/s",
      "other refusals / errors",
      "CPU µs/reply",
      "machine CPU busy",
      "peak RSS MB",
      "accepted → delivered",
    ],
    runs.map((run) => [
      run.name,
      int(run.repliesPerSecond),
      bare ? two(run.repliesPerSecond / bare) : "n/a",
      int(run.acceptedPerSecond),
      int(run.bufferFullPerSecond),
      otherText(run),
      int(run.cpuMicrosPerReply),
      run.machineBusy === null ? "n/a" : `${Math.round(run.machineBusy * 100)}%`,
      mb(run.peakRss),
      `${int(run.accepted)} → ${int(run.delivered)}`,
    ]),
  );
}

function costTable(runs) {
  const withCosts = runs.filter((run) => run.costs);
  return table(
    [
      "setup",
      "delivered",
      "statements/msg",
      "statement time µs/msg",
      "Postgres CPU µs/msg",
      "WAL bytes/msg",
      "commits/msg (xact_commit)",
      "write transactions/msg",
    ],
    withCosts.map((run) => [
      run.name,
      int(run.costs.delivered),
      three(run.costs.statementsPerMessage),
      two(run.costs.statementMicrosPerMessage),
      int(run.costs.postgresCpuMicrosPerMessage),
      int(run.costs.walBytesPerMessage),
      three(run.costs.commitsPerMessage) + (run.costs.backendsGone ? "" : " (a backend stayed)"),
      three(run.costs.writeTransactionsPerMessage),
    ]),
  );
}

function statementMix(run) {
  if (!run?.costs?.topStatements?.length) return [];
  return [
    `Statement mix of "${run.name}" (pg_stat_statements by calls, statements with the same first 100 characters summed):`,
    "",
    table(
      ["calls/msg", "µs/msg", "rows/call", "variants", "statement"],
      run.costs.topStatements
        .slice(0, 6)
        .map((statement) => [
          three(statement.callsPerMessage),
          two(statement.microsPerMessage),
          two(statement.rowsPerCall),
          int(statement.variants),
          `\`${statement.query.slice(0, 100).replaceAll("|", "\\|").replaceAll("`", "'")}\``,
        ]),
    ),
    "",
  ];
}

function roundTripLines(roundTrips) {
  if (!roundTrips) return [];
  const kinds = { new: "a new conversation each", same: "one conversation, which the replica runs" };
  const probes = Object.entries(roundTrips).flatMap(([build, byKind]) =>
    Object.entries(byKind).map(([kind, probe]) => ({ build, kind, probe })),
  );
  const rows = probes.map(({ build, kind, probe }) => [
    build === "thisBuild" ? "this build" : "baseline build",
    kinds[kind],
    `${two(probe.accept.median)} (mean ${two(probe.accept.mean)})`,
    `${two(probe.delivery.median)} (mean ${two(probe.delivery.mean)})`,
    `${two(probe.total.median)} (mean ${two(probe.total.mean)})`,
    `${int(probe.messages)}${probe.lost ? `, ${probe.lost} without reply` : ""}`,
    two(probe.idleRoundTripsPerSecond),
  ]);
  return [
    "### Round trips to Postgres on a message's critical path (1 replica, one message at a time)",
    "",
    table(
      [
        "build",
        "messages of",
        "send → 200 (accept)",
        "200 → reply at the receiver (delivery)",
        "send → reply",
        "messages",
        "idle replica: round trips/s",
      ],
      rows,
    ),
    "",
    "A round trip is one Query or Sync the replica sends (through a counting relay); median over the messages, " +
      "each sent after the previous one's reply. The idle rate is the replica's timers, which a span may catch.",
    "",
  ];
}

/** The comparisons under the saturation table, as one paragraph. */
function comparisonLine(comparisons) {
  const parts = [
    ["in memory / bare", comparisons.memoryOverBare],
    ["state_dir / in memory", comparisons.sqliteOverMemory],
    ["1 replica / state_dir", comparisons.postgresOverSqlite],
    ["1 replica / graphile-worker", comparisons.postgresOverGraphile],
    ["2 replicas / 1", comparisons.twoOverOne],
    ["3 replicas / 1", comparisons.threeOverOne],
    ["this build / baseline: in memory", comparisons.memoryOverBaseline],
    ["state_dir", comparisons.sqliteOverBaseline],
    ["1 replica", comparisons.postgresOverBaseline],
    ["2 replicas", comparisons.twoReplicasOverBaseline],
    ["baseline's state_dir / in memory", comparisons.baselineSqliteOverMemory],
    ["baseline's 1 replica / state_dir", comparisons.baselinePostgresOverSqlite],
  ].filter(([, value]) => value !== null && value !== undefined);
  return parts.map(([name, value]) => `${name} ${three(value)}`).join("; ");
}

/** The saturation phase's sections of the report. */
export function saturationLines(saturation, options) {
  if (!saturation || saturation.skipped !== null) {
    return [`Saturation, database cost, no knee: skipped (${saturation?.skipped ?? "not measured"}).`, ""];
  }
  const { runs } = saturation;
  const lines = [
    `### Saturation (wrk, ${options.saturationConnections} connections in all, ${int(options.saturationConversations)} conversations, closed loop; ${options.saturationWarmupSeconds} s (several replicas: ${options.saturationReplicaWarmupSeconds} s, past their first claims), then ${options.saturationSeconds} s measured)`,
    "",
    saturationTable(runs),
    "",
    "Replies/s: replies that reached the receiver per second in the measured window; accepted/s and 503/s over wrk's whole run; " +
      "CPU µs/reply: the server's processes (every replica) in the window; machine CPU busy: all cores, everything on the box. " +
      `Ratios of replies/s, same run: ${comparisonLine(saturation.comparisons)}.` +
      (saturation.postgresSkipped ? ` Postgres runs skipped (${saturation.postgresSkipped}).` : ""),
    "",
    ...timelineRoundLines(saturation.timelineRuns ?? [], runs),
  ];
  if (runs.some((run) => run.costs)) {
    lines.push(
      "### Database cost per delivered message, saturated (pg_stat_statements, pg_stat_database, /proc)",
      "",
      costTable(runs),
      "",
      "Over the whole run (warm-up, load, drain, shutdown) divided by every reply delivered in it. Postgres CPU: user + " +
        "system time of every process of the cluster. Write transactions: transaction ids handed out.",
      "",
      ...statementMix(runs.find((run) => run.key === "postgres-1")),
    );
  }
  lines.push(...roundTripLines(saturation.roundTrips), ...noKneeLines(saturation.noKnee));
  return lines;
}

/** The targets of issue 30 that the saturation phase measures. */
export function saturationTargets(saturation) {
  if (!saturation || saturation.skipped !== null) return [];
  const { runs, comparisons, noKnee } = saturation;
  const rate = (key) => runs.find((run) => run.key === key)?.repliesPerSecond ?? null;
  const targets = [];
  if (comparisons.sqliteOverMemory !== null) {
    targets.push({
      target: `saturated: state_dir (SQLite) replies/s ≥ ${SATURATION_TARGETS.durableOverMemory} × in memory, same run`,
      measured: `${three(comparisons.sqliteOverMemory)} × (${int(rate("sqlite"))} vs ${int(rate("memory"))} replies/s)`,
      pass: comparisons.sqliteOverMemory >= SATURATION_TARGETS.durableOverMemory,
    });
  }
  for (const [mode, ratio, on, off] of [
    ["in memory (admin API on in both)", comparisons.memoryTimelineOverOff, "memory-timeline", "memory-timeline-off"],
    ["state_dir (SQLite)", comparisons.sqliteTimelineOverOff, "sqlite", "sqlite-timeline-off"],
  ]) {
    if (ratio === null || ratio === undefined) continue;
    targets.push({
      target: `saturated, ${mode}: replies/s with the message timeline ≥ ${SATURATION_TARGETS.timelineOverOff} × without it, same run`,
      measured: `${three(ratio)} × (${timelineMeans(saturation.timelineRuns ?? runs, on, off)})`,
      pass: ratio >= SATURATION_TARGETS.timelineOverOff,
    });
  }
  targets.push(...noKneeTargets(noKnee, SATURATION_TARGETS.noKneeRatio));
  for (const run of runs.filter((candidate) => candidate.costs && candidate.build === "this")) {
    const cpu = run.costs.postgresCpuMicrosPerMessage;
    targets.push({
      target: `Postgres CPU ≤ ${SATURATION_TARGETS.postgresCpuMicrosPerMessage} µs per message, saturated; ${run.replicas} replica${run.replicas === 1 ? "" : "s"}`,
      measured: `${int(cpu)} µs/msg (${int(run.repliesPerSecond)} replies/s)`,
      pass: cpu === null ? null : cpu <= SATURATION_TARGETS.postgresCpuMicrosPerMessage,
    });
  }
  if (comparisons.postgresOverSqlite !== null) {
    targets.push({
      target: `saturated: postgres_url_env, 1 replica, replies/s ≥ ${SATURATION_TARGETS.postgresOverSqlite} × state_dir (SQLite), same run`,
      measured: `${three(comparisons.postgresOverSqlite)} × (${int(rate("postgres-1"))} vs ${int(rate("sqlite"))} replies/s)`,
      pass: comparisons.postgresOverSqlite >= SATURATION_TARGETS.postgresOverSqlite,
    });
  }
  if (comparisons.postgresOverGraphile !== null) {
    targets.push({
      target: `saturated: postgres_url_env, 1 replica, replies/s ≥ ${SATURATION_TARGETS.postgresOverGraphile} × node:http + graphile-worker`,
      measured: `${two(comparisons.postgresOverGraphile)} × (${int(rate("postgres-1"))} vs ${int(rate("graphile-worker"))} replies/s)`,
      pass: comparisons.postgresOverGraphile >= SATURATION_TARGETS.postgresOverGraphile,
    });
  }
  return targets;
}
