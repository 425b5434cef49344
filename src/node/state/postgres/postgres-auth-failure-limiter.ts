import type pg from "pg";
import {
  type AuthFailureBlock,
  type AuthFailureLimit,
  type AuthFailureLimiter,
  limitKey,
} from "../../../core/auth-limit/auth-failure-limiter.js";
import { blockOf } from "../../../core/auth-limit/failure-window.js";
import type { Clock } from "../../../core/clock.js";
import { deleteInBatches } from "./postgres-batched-delete.js";
import { asStateError } from "./postgres-state-error.js";

/** The shared limiter, with the upkeep the backend runs on its timer. */
export interface PostgresAuthFailureLimiter extends AuthFailureLimiter {
  /** Learns whether any replica counts a failure now, which decides whether checks ask the database. */
  refresh(): Promise<void>;
  /** Drops windows nothing counts in any more; returns how many. */
  prune(now: number): Promise<number>;
}

/**
 * Counts a failure at `$2`: the window keeps its live times (newer than `$2 - $3`), at most
 * `$4 - 1` of them (older ones no longer decide anything), then `$2`, as `addFailure` does.
 * One statement, so that failures counted by several replicas at once all count.
 */
const RECORD = `INSERT INTO webhook_channel.auth_failures AS f (key, times, warned_at, expires_at)
VALUES ($1, ARRAY[$2::bigint], NULL, $2 + $3)
ON CONFLICT (key) DO UPDATE SET
  times = ARRAY(
    SELECT t FROM (
      SELECT t FROM unnest(f.times) AS t WHERE t + $3 > $2 ORDER BY t DESC LIMIT greatest($4 - 1, 0)
    ) AS live ORDER BY t
  ) || $2::bigint,
  expires_at = greatest(f.expires_at, $2 + $3)`;

/**
 * The auth-failure limit of `postgres_url_env`, counted once across replicas: one row per
 * channel and address group, holding its failure times within the window, the same
 * {@link blockOf} deciding as in memory. The first refusal in a window is claimed with a
 * conditional update, so one replica logs it.
 *
 * A check must not cost a round trip per request while nobody is guessing: a replica asks the
 * database only while a failure counts anywhere, as far as it knows, that is when it counted
 * one itself, or its last {@link PostgresAuthFailureLimiter.refresh} (every second, on the
 * backend's timer) found a window. Another replica's first failures may so pass one check here
 * before this replica learns of them; the secret is still compared, and its own failure makes
 * it ask from then on, so a guesser gains at most one try per replica.
 */
export function createPostgresAuthFailureLimiter(pool: pg.Pool, clock: Clock): PostgresAuthFailureLimiter {
  // Until the first refresh says otherwise, assume failures count.
  let counting = true;
  let recorded = 0;

  const check = async (channel: string, address: string, limit: AuthFailureLimit) => {
    const key = limitKey(channel, address);
    const now = clock.now();
    const result = await pool.query<{ times: string[]; warned_at: string | null }>(
      "SELECT times, warned_at FROM webhook_channel.auth_failures WHERE key = $1",
      [key],
    );
    const row = result.rows[0];
    if (row === undefined) return undefined;
    const warnedAt = row.warned_at === null ? null : Number(row.warned_at);
    const block = blockOf({ times: row.times.map(Number), warnedAt }, now, limit);
    if (block === undefined || !block.first) return block;
    // Replicas refusing at once: the one whose update lands is the one that logs.
    const claimed = await pool.query(
      `UPDATE webhook_channel.auth_failures SET warned_at = $2, expires_at = greatest(expires_at, $2 + $3)
       WHERE key = $1 AND (warned_at IS NULL OR warned_at + $3 <= $2)`,
      [key, now, limit.windowMs],
    );
    return { retryAfterSeconds: block.retryAfterSeconds, first: (claimed.rowCount ?? 0) > 0 };
  };

  return {
    check(channel, address, limit): Promise<AuthFailureBlock | undefined> | undefined {
      if (!counting) return undefined;
      return check(channel, address, limit).catch((error: unknown) => {
        throw asStateError(error);
      });
    },
    recordFailure(channel, address, limit) {
      counting = true;
      recorded += 1;
      const now = clock.now();
      return pool.query(RECORD, [limitKey(channel, address), now, limit.windowMs, limit.max]).then(
        () => undefined,
        (error: unknown) => {
          throw asStateError(error);
        },
      );
    },
    async refresh() {
      const before = recorded;
      const result = await pool.query<{ counting: boolean }>(
        "SELECT EXISTS (SELECT 1 FROM webhook_channel.auth_failures WHERE expires_at > $1) AS counting",
        [clock.now()],
      );
      // A failure counted here while the read ran is newer than its answer.
      if (recorded === before) counting = result.rows[0]?.counting === true;
    },
    prune: (now) =>
      deleteInBatches(
        pool,
        `DELETE FROM webhook_channel.auth_failures WHERE key IN (
           SELECT key FROM webhook_channel.auth_failures WHERE expires_at <= $1 LIMIT $2 FOR UPDATE SKIP LOCKED)`,
        [now],
      ),
  };
}
