import pg from "pg";
import type { Clock } from "../../../core/clock.js";
import { DEFAULT_CONVERSATION_RETENTION_HOURS } from "../../../core/config/conversation-memory-schema.js";
import type { Logger } from "../../../core/log/logger.js";
import type { PostgresParts, StateBackend } from "../state-backend.js";
import { createPostgresAuthFailureLimiter } from "./postgres-auth-failure-limiter.js";
import { createPostgresCircuitStore } from "./postgres-circuit-store.js";
import { createPostgresConversationStore } from "./postgres-conversation-store.js";
import { createPostgresDeadLetterStore } from "./postgres-dead-letter-store.js";
import { createPostgresHealth } from "./postgres-health.js";
import { createPostgresIdempotencyStore, pruneIdempotencyKeys } from "./postgres-idempotency-store.js";
import { forgetIdlePostgresLanes } from "./postgres-idle-lanes.js";
import { createPostgresLaneStore } from "./postgres-lane-store.js";
import { migratePostgres } from "./postgres-migrations.js";
import { APPLICATION_NAME, openPostgresPool } from "./postgres-pool.js";
import { postgresErrorMessage } from "./postgres-state-error.js";
import { createPostgresTimelineStore } from "./postgres-timeline-store.js";
import { prunePostgresTurns } from "./postgres-turn-prune.js";
import { assertReadablePostgresUrl, describePostgres, postgresUrlProblem } from "./postgres-url.js";

/** How often a replica holding lanes for a receiver that is down reads the shared circuit again. */
const CIRCUIT_REFRESH_MS = 1_000;

/** The state backend of `postgres_url_env`. */
export interface PostgresBackend extends StateBackend {
  readonly mode: "postgres";
  readonly postgres: PostgresParts;
}

/**
 * The Postgres mode (`postgres_url_env`): one database, in the `webhook_channel` schema, holds
 * what `state_dir` holds (accepted jobs, conversations, sequences, idempotency keys, dead
 * letters) plus the auth-failure windows and the replicas' lanes, shared by every replica.
 * Connects and migrates before it returns (several replicas starting at once migrate once);
 * throws when the database cannot be reached or was written by a newer webhook-channel.
 */
export async function openPostgresBackend(
  url: string,
  logger: Logger,
  clock: Clock,
  replica: string = newReplicaId(),
  retentionHours: number = DEFAULT_CONVERSATION_RETENTION_HOURS,
): Promise<PostgresBackend> {
  const unreadable = postgresUrlProblem(url);
  if (unreadable !== undefined)
    throw new Error(`cannot open the postgres state: the URL cannot be read: ${unreadable}`);
  const where = describePostgres(url);
  const pool = openPostgresPool(url, { logger });
  try {
    await migratePostgres(pool);
  } catch (error) {
    await pool.end().catch(() => undefined);
    const place =
      where.user === undefined
        ? "a connection string that is not a URL"
        : `${where.user}@${where.host}:${where.port}/${where.database}`;
    throw new Error(`cannot open the postgres state (${place}): ${postgresErrorMessage(error)}`, { cause: error });
  }
  const lanes = createPostgresLaneStore(pool, replica, logger);
  const conversations = createPostgresConversationStore(pool, undefined, logger, {
    hours: retentionHours,
    now: () => clock.now(),
  });
  const authFailures = createPostgresAuthFailureLimiter(pool, clock);
  const deadLetters = createPostgresDeadLetterStore(pool);
  const health = createPostgresHealth(pool, authFailures, logger, where, replica);
  await health.probe();
  let closed: Promise<void> | undefined;

  return {
    mode: "postgres",
    lanes,
    // Each lane's epoch comes from the claim that gave it to this replica.
    epoch: 0,
    circuits: createPostgresCircuitStore(pool),
    circuitRefreshMs: CIRCUIT_REFRESH_MS,
    idempotency: createPostgresIdempotencyStore(pool),
    conversations,
    timeline: createPostgresTimelineStore(pool),
    sqlite: undefined,
    postgres: { pool, lanes, authFailures, replica },
    // Every replica's letters, in the one table: `restore` is for memory mode's queues.
    deadLetterStore: () => deadLetters,
    storedDeadLetters: () => health.deadLetters(),
    writeProblem: () => health.problem(),
    // Replicas share the database: a lane another one took is fenced lane by lane, never the process.
    claimLost: undefined,
    knownWriteProblem: () => health.writeCheckProblem(),
    writesConfirmedAt: () => health.writeCheckedAt(),
    describe: () => ({ mode: "postgres", ...where }),
    // One after the other: the upkeep's jobs never overlap, and one that fails leaves nothing running.
    pruneExpired: async (now) => (await pruneIdempotencyKeys(pool, now)) + (await authFailures.prune(now)),
    pruneConversations: (cutoff) => prunePostgresTurns(pool, cutoff),
    forgetIdleConversations: (cutoff) => forgetIdlePostgresLanes(pool, cutoff),
    close() {
      closed ??= (async () => {
        health.stop();
        // What waits for its group (finished jobs' deletes above all) is committed first.
        await Promise.all([lanes.flush(), conversations.flush()]);
        await pool.end();
      })();
      return closed;
    },
  };
}

/**
 * The server version at `url` (`SHOW server_version`), for `config check --preflight`: one
 * connection, closed again. Throws with pg's reason (never the URL's password) when it
 * cannot connect.
 */
export async function postgresServerVersion(url: string): Promise<string> {
  assertReadablePostgresUrl(url);
  const client = new pg.Client({
    connectionString: url,
    application_name: APPLICATION_NAME,
    connectionTimeoutMillis: 5_000,
  });
  // A connection that fails after connect() resolved emits `error`; the query below reports it.
  client.on("error", () => undefined);
  try {
    await client.connect();
    const result = await client.query<{ server_version: string }>("SHOW server_version");
    return result.rows[0]?.server_version ?? "(unknown)";
  } catch (error) {
    throw new Error(postgresErrorMessage(error), { cause: error });
  } finally {
    await client.end().catch(() => undefined);
  }
}

/** A replica's id: [a-z0-9] only, since it names the replica's LISTEN channel. */
export function newReplicaId(): string {
  return `r${crypto.randomUUID().replaceAll("-", "").slice(0, 15)}`;
}
