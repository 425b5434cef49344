// What a run costs the database, per delivered message (issue 30): the statements and their
// execution time (pg_stat_statements), commits (pg_stat_database.xact_commit) and write
// transactions (the transaction id counter), WAL bytes (pg_current_wal_lsn), and the CPU time of
// every process of the cluster (/proc). The cluster must be started with
// `shared_preload_libraries=pg_stat_statements`; the probe creates the extension in its
// `postgres` database, whose view shows every database's statements.
//
// A window is opened before the load and closed after it, once the services have stopped and
// their backends are gone: a backend writes its counts to pg_stat_database only now and then
// (up to seconds later) and always when it exits, so only then is xact_commit complete. The
// window thus covers the whole run (warm-up, load, drain, shutdown), and the counts are divided
// by every reply delivered in it.
import pg from "pg";
import { cpuSeconds } from "./proc-stats.mjs";

/** The settings of every bench cluster: Postgres's defaults (fsync on) plus the statement statistics. */
export const BENCH_CLUSTER = {
  durable: true,
  settings: ["shared_preload_libraries=pg_stat_statements", "pg_stat_statements.track_planning=on"],
};

const GONE_TIMEOUT_MS = 10_000;
const TOP_STATEMENTS = 12;
const STATEMENT_PREFIX = 100;

/**
 * CPU seconds of the whole cluster: the postmaster with its ended children (cutime/cstime, the
 * postmaster waits for every backend) plus every child alive now. A backend that ends inside a
 * window moves from the second sum to the first, so the difference of two readings is exact.
 */
async function clusterCpuSeconds(cluster) {
  const { postmaster, children } = await cluster.processes();
  let total = cpuSeconds(postmaster, true);
  if (total === null) return null;
  for (const pid of children) total += cpuSeconds(pid) ?? 0;
  return total;
}

/**
 * Connects to `cluster` (from scripts/postgres-cluster.mjs) and returns `open(database)`, which
 * starts a window on that database and returns `close(delivered)`: call it after the services
 * have stopped; it resolves to the costs per delivered message.
 */
export async function createCostProbe(cluster) {
  const client = new pg.Client({ connectionString: cluster.url });
  await client.connect();
  await client.query("CREATE EXTENSION IF NOT EXISTS pg_stat_statements");
  const one = async (text, values) => (await client.query(text, values)).rows[0];

  async function databaseCounters(database) {
    const row = await one(
      `SELECT d.xact_commit::bigint::text AS commits, d.xact_rollback::bigint::text AS rollbacks,
              pg_current_wal_lsn()::text AS lsn,
              pg_snapshot_xmax(pg_current_snapshot())::text AS next_xid
         FROM pg_stat_database d WHERE d.datname = $1`,
      [database],
    );
    return {
      commits: Number(row.commits),
      rollbacks: Number(row.rollbacks),
      lsn: row.lsn,
      nextXid: Number(row.next_xid),
    };
  }

  /** Waits until no backend is connected to `database`, so that each has written its counts. */
  async function backendsGone(database) {
    const giveUpAt = Date.now() + GONE_TIMEOUT_MS;
    for (;;) {
      const { count } = await one(
        "SELECT count(*)::int AS count FROM pg_stat_activity WHERE datname = $1 AND backend_type = 'client backend'",
        [database],
      );
      if (count === 0 || Date.now() > giveUpAt) return count === 0;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }

  return {
    async open(database) {
      await one("SELECT pg_stat_statements_reset()");
      const before = await databaseCounters(database);
      const cpuBefore = await clusterCpuSeconds(cluster);
      const openedAt = Date.now();
      return {
        async close(delivered) {
          const settled = await backendsGone(database);
          const cpuAfter = await clusterCpuSeconds(cluster);
          const seconds = (Date.now() - openedAt) / 1000;
          const after = await databaseCounters(database);
          const { wal } = await one("SELECT pg_wal_lsn_diff($1::pg_lsn, $2::pg_lsn)::float8 AS wal", [
            after.lsn,
            before.lsn,
          ]);
          const totals = await one(
            `SELECT coalesce(sum(calls), 0)::float8 AS calls, coalesce(sum(total_exec_time), 0)::float8 AS exec_ms,
                    coalesce(sum(total_plan_time), 0)::float8 AS plan_ms, coalesce(sum(rows), 0)::float8 AS rows
               FROM pg_stat_statements s JOIN pg_database d ON d.oid = s.dbid WHERE d.datname = $1`,
            [database],
          );
          // Grouped by the statement's first characters: one kind of statement built for groups
          // of several sizes is several entries in pg_stat_statements.
          const { rows: top } = await client.query(
            `SELECT left(regexp_replace(query, '\\s+', ' ', 'g'), ${STATEMENT_PREFIX}) AS query,
                    sum(calls)::float8 AS calls, sum(total_exec_time)::float8 AS exec_ms,
                    sum(total_plan_time)::float8 AS plan_ms, sum(rows)::float8 AS rows,
                    count(*)::int AS variants
               FROM pg_stat_statements s JOIN pg_database d ON d.oid = s.dbid WHERE d.datname = $1
              GROUP BY 1 ORDER BY calls DESC LIMIT ${TOP_STATEMENTS}`,
            [database],
          );
          const per = (value) => (delivered > 0 && value !== null ? value / delivered : null);
          const cpu = cpuBefore === null || cpuAfter === null ? null : cpuAfter - cpuBefore;
          return {
            delivered,
            seconds,
            // False when a backend was still connected after the wait: xact_commit may then miss some.
            backendsGone: settled,
            statements: totals.calls,
            statementsPerMessage: per(totals.calls),
            statementMicrosPerMessage: per(totals.exec_ms * 1000),
            // Planning, which an unnamed statement pays on every call.
            planMicrosPerMessage: per(totals.plan_ms * 1000),
            postgresCpuSeconds: cpu,
            postgresCpuMicrosPerMessage: per(cpu === null ? null : cpu * 1e6),
            walBytes: wal,
            walBytesPerMessage: per(wal),
            commits: after.commits - before.commits,
            commitsPerMessage: per(after.commits - before.commits),
            rollbacks: after.rollbacks - before.rollbacks,
            // Transaction ids handed out: one per transaction that wrote, read at once (no lag).
            writeTransactionsPerMessage: per(after.nextXid - before.nextXid),
            topStatements: top.map((row) => ({
              query: row.query,
              callsPerMessage: per(row.calls),
              microsPerMessage: per(row.exec_ms * 1000),
              planMicrosPerMessage: per(row.plan_ms * 1000),
              rowsPerCall: row.calls > 0 ? row.rows / row.calls : null,
              variants: row.variants,
            })),
          };
        },
      };
    },
    close: () => client.end(),
  };
}
