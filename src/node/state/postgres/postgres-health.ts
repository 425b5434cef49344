import type pg from "pg";
import type { Logger } from "../../../core/log/logger.js";
import type { PostgresAuthFailureLimiter } from "./postgres-auth-failure-limiter.js";
import { countDeadLetters } from "./postgres-dead-letter-store.js";
import { timedQuery } from "./postgres-pool.js";
import { postgresErrorMessage, sqlState } from "./postgres-state-error.js";

/** How often the background probe asks the database. */
export const POSTGRES_PROBE_INTERVAL_MS = 1_000;

/**
 * How long the probe waits for its answer: with the interval, a database that stops answering
 * shows in `/readyz` within a few seconds, sooner than a write gives up on it.
 */
const PROBE_TIMEOUT_MS = 2_000;

/** How long one whole probe (its three statements) may take before it counts as failed. */
const PROBE_LIMIT_MS = 3_000;

/**
 * The write check: the replica's row in `write_checks`, written and committed. A read would
 * answer while commits hang (a synchronous standby that is gone, storage that stalls on flush),
 * and a transaction that writes nothing commits without waiting for either.
 */
const WRITE_CHECK = `INSERT INTO webhook_channel.write_checks (replica, checked_at) VALUES ($1, now())
  ON CONFLICT (replica) DO UPDATE SET checked_at = excluded.checked_at`;

/** SQLSTATE read_only_sql_transaction: a standby, or `default_transaction_read_only`. */
const READ_ONLY = "25006";

/** SQLSTATE insufficient_privilege. */
const DENIED = "42501";

/**
 * How much earlier than our clock says the driver's time limit may end a statement: it arms its
 * timer on the event loop's cached clock, which can be a little behind.
 */
const TIMER_SLACK_MS = 250;

const READ_ONLY_PROBLEM = "postgres is read-only (a standby, or default_transaction_read_only)";

/**
 * What the synchronous questions of the state backend (`writeProblem`, `storedDeadLetters`)
 * are answered from: values a background probe refreshes, since `/readyz` and `/metrics`
 * cannot wait for a round trip (nor hang on a database that does not answer).
 */
export interface PostgresHealth {
  /** "postgres unreachable: …" (or read-only) since the last probe failed; undefined once one succeeds. */
  problem(): string | undefined;
  /**
   * The part of {@link problem} that stops a message's write, undefined when there is none: what
   * the last probe's write check found (read-only, an error), or no answer within the probe's
   * limit in any of its parts. A dead-letter count or auth-failure refresh that fails with an
   * error does not count.
   */
  writeCheckProblem(): string | undefined;
  /**
   * `performance.now()` at the start of the last probe whose write check committed (its
   * finding undefined): a write that failed before that moment is known to have been passing.
   */
  writeCheckedAt(): number | undefined;
  /** Dead letters per channel at the last successful probe. */
  deadLetters(): ReadonlyMap<string, number>;
  /** Probes once now (at start, so that the first answers are real). */
  probe(): Promise<void>;
  /** Stops the timer; a probe under way ends by itself. */
  stop(): void;
}

/**
 * Probes every {@link POSTGRES_PROBE_INTERVAL_MS} on an unref'd timer, one probe at a time: a
 * write check ({@link WRITE_CHECK} for `replica`: a server in recovery or read-only, as after a
 * failover to a standby, refuses it, and one whose commits hang does not answer), the
 * dead-letter counts, and the auth-failure limiter's refresh. A change of state is logged once,
 * not every second.
 */
export function createPostgresHealth(
  pool: pg.Pool,
  authFailures: PostgresAuthFailureLimiter,
  logger: Logger,
  describe: Readonly<Record<string, string | number>>,
  replica: string,
): PostgresHealth {
  let problem: string | undefined;
  let writeCheckProblem: string | undefined;
  let writeCheckedAt: number | undefined;
  let deadLetters: ReadonlyMap<string, number> = new Map();
  let probing: Promise<void> | undefined;

  const check = async (): Promise<void> => {
    const started = performance.now();
    let timer: ReturnType<typeof setTimeout> | undefined;
    // Whatever the driver does with a connection the server stopped answering on, a probe that
    // has not ended by then counts as failed, and the next one may start. No answer stops
    // writes too, whichever part of the probe it stopped in: one whose write check answered
    // just before a freeze must not leave the writes looking fine for another whole probe.
    const overdue = new Promise<Look>((resolve) => {
      timer = setTimeout(() => {
        const found = `postgres unreachable: no answer within ${PROBE_LIMIT_MS} ms`;
        resolve({ found, write: found });
      }, PROBE_LIMIT_MS);
    });
    const { found, write } = await Promise.race([look(), overdue]);
    clearTimeout(timer);
    writeCheckProblem = write;
    if (write === undefined) writeCheckedAt = started;
    if (found !== problem) {
      if (found === undefined) logger.info("postgres answers again", describe);
      else logger.error("postgres cannot take writes", { ...describe, problem: found });
    }
    problem = found;
  };

  let deniedSaid = false;
  /**
   * The write check: its problem (read-only), undefined when the write was committed; throws what
   * stops writes otherwise. A role the check's table was not granted to (a database an
   * administrator migrated) is not an outage: it asks whether the server takes writes instead.
   */
  const writeCheck = async (): Promise<string | undefined> => {
    const started = performance.now();
    try {
      await pool.query(timedQuery(WRITE_CHECK, PROBE_TIMEOUT_MS, [replica]));
      return undefined;
    } catch (error) {
      if (sqlState(error) === READ_ONLY) return READ_ONLY_PROBLEM;
      if (sqlState(error) === undefined && performance.now() - started >= PROBE_TIMEOUT_MS - TIMER_SLACK_MS) {
        // An operator whose psql answers must not be told only that the server is unreachable.
        throw new Error(
          `no answer to a write within ${PROBE_TIMEOUT_MS} ms (a server that stopped answering, or whose commits wait, as for a synchronous standby that is gone)`,
          { cause: error },
        );
      }
      if (sqlState(error) !== DENIED) throw error;
      if (!deniedSaid) {
        deniedSaid = true;
        logger.warn(
          "the probe cannot write webhook_channel.write_checks, so a database whose commits hang is not found: grant the role INSERT, UPDATE, SELECT and DELETE on it",
          { ...describe, error: postgresErrorMessage(error) },
        );
      }
    }
    const result = await pool.query<{ read_only: string }>(
      timedQuery("SELECT current_setting('transaction_read_only') AS read_only", PROBE_TIMEOUT_MS),
    );
    return result.rows[0]?.read_only === "on" ? READ_ONLY_PROBLEM : undefined;
  };

  /** One look at the database: the write check, then the dead letters and the auth-failure windows. */
  const look = async (): Promise<Look> => {
    let write: string | undefined;
    try {
      // A read-only server still answers the reads below.
      write = await writeCheck();
    } catch (error) {
      const found = `postgres unreachable: ${postgresErrorMessage(error)}`;
      return { found, write: found };
    }
    try {
      deadLetters = await countDeadLetters(pool);
      await authFailures.refresh();
    } catch (error) {
      // Those parts' own failure: /readyz says so, but it does not stop a message's write.
      return { found: `postgres unreachable: ${postgresErrorMessage(error)}`, write };
    }
    return { found: write, write };
  };

  const probe = (): Promise<void> => {
    probing ??= check().finally(() => {
      probing = undefined;
    });
    return probing;
  };

  const timer = setInterval(() => {
    // Never rejects: check() turns every failure into the problem it reports.
    void probe();
  }, POSTGRES_PROBE_INTERVAL_MS);
  timer.unref();

  return {
    problem: () => problem,
    writeCheckProblem: () => writeCheckProblem,
    writeCheckedAt: () => writeCheckedAt,
    deadLetters: () => deadLetters,
    probe,
    stop: () => clearInterval(timer),
  };
}

/** What one probe found: its problem (for `/readyz`), and the part of it that stops writes. */
interface Look {
  readonly found: string | undefined;
  readonly write: string | undefined;
}
