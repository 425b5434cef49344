import type pg from "pg";
import type { Logger } from "../../../core/log/logger.js";
import type { PostgresAuthFailureLimiter } from "./postgres-auth-failure-limiter.js";
import { countDeadLetters } from "./postgres-dead-letter-store.js";
import { timedQuery } from "./postgres-pool.js";
import { postgresErrorMessage } from "./postgres-state-error.js";

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
 * What the synchronous questions of the state backend (`writeProblem`, `storedDeadLetters`)
 * are answered from: values a background probe refreshes, since `/readyz` and `/metrics`
 * cannot wait for a round trip (nor hang on a database that does not answer).
 */
export interface PostgresHealth {
  /** "postgres unreachable: …" (or read-only) since the last probe failed; undefined once one succeeds. */
  problem(): string | undefined;
  /**
   * What the last probe's write check found (read-only, an error, no answer), undefined when it
   * passed: the part of {@link problem} that stops a message's write, which a failed dead-letter
   * count or auth-failure refresh does not.
   */
  writeCheckProblem(): string | undefined;
  /** Dead letters per channel at the last successful probe. */
  deadLetters(): ReadonlyMap<string, number>;
  /** Probes once now (at start, so that the first answers are real). */
  probe(): Promise<void>;
  /** Stops the timer; a probe under way ends by itself. */
  stop(): void;
}

/**
 * Probes every {@link POSTGRES_PROBE_INTERVAL_MS} on an unref'd timer, one probe at a time: a
 * write check (a server in recovery or read-only, as after a failover to a standby, takes no
 * write), the dead-letter counts, and the auth-failure limiter's refresh. A change of state is
 * logged once, not every second.
 */
export function createPostgresHealth(
  pool: pg.Pool,
  authFailures: PostgresAuthFailureLimiter,
  logger: Logger,
  describe: Readonly<Record<string, string>>,
): PostgresHealth {
  let problem: string | undefined;
  let writeCheckProblem: string | undefined;
  let deadLetters: ReadonlyMap<string, number> = new Map();
  let probing: Promise<void> | undefined;

  const check = async (): Promise<void> => {
    let timer: ReturnType<typeof setTimeout> | undefined;
    // Whatever the driver does with a connection the server stopped answering on, a probe that
    // has not ended by then counts as failed, and the next one may start.
    const overdue = new Promise<string>((resolve) => {
      timer = setTimeout(() => resolve(`postgres unreachable: no answer within ${PROBE_LIMIT_MS} ms`), PROBE_LIMIT_MS);
    });
    const write: WriteCheck = { answered: false, problem: undefined };
    const found = await Promise.race([look(write), overdue]);
    clearTimeout(timer);
    // Overdue before the write check answered: the write check is what did not answer.
    writeCheckProblem = write.answered ? write.problem : found;
    if (found !== problem) {
      if (found === undefined) logger.info("postgres answers again", describe);
      else logger.error("postgres cannot take writes", { ...describe, problem: found });
    }
    problem = found;
  };

  /** One look at the database (the write check, the dead letters, the auth-failure windows): its problem, if any. */
  const look = async (write: WriteCheck): Promise<string | undefined> => {
    let found: string | undefined;
    try {
      const result = await pool.query<{ read_only: string }>(
        timedQuery("SELECT current_setting('transaction_read_only') AS read_only", PROBE_TIMEOUT_MS),
      );
      if (result.rows[0]?.read_only === "on")
        found = "postgres is read-only (a standby, or default_transaction_read_only)";
      write.answered = true;
      write.problem = found;
      deadLetters = await countDeadLetters(pool);
      await authFailures.refresh();
    } catch (error) {
      found = `postgres unreachable: ${postgresErrorMessage(error)}`;
      if (!write.answered) {
        write.answered = true;
        write.problem = found;
      }
    }
    return found;
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
    deadLetters: () => deadLetters,
    probe,
    stop: () => clearInterval(timer),
  };
}

/** What one probe's write check came to: whether it answered, and its problem if it did. */
interface WriteCheck {
  answered: boolean;
  problem: string | undefined;
}
