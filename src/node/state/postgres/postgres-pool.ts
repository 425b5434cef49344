import pg from "pg";
import { type Logger, silentLogger } from "../../../core/log/logger.js";
import { postgresErrorMessage } from "./postgres-state-error.js";
import { describePostgres } from "./postgres-url.js";

/**
 * How long the server runs one statement before it cancels it: shorter than the client's wait
 * ({@link QUERY_TIMEOUT_MS}), so that a slow but live server cancels what the client gives up on.
 */
export const STATEMENT_TIMEOUT_MS = 3_000;

/**
 * How long the client waits for one statement: a database that stops answering (a partition, a
 * frozen or failing-over primary) must cost a request a 503 within seconds, not hang it. The
 * connection is then dropped; the server, when it answers again, finds it gone within
 * {@link CONNECTION_CHECK_MS} and stops the statement, if its own timeout did not already.
 */
export const QUERY_TIMEOUT_MS = 4_000;

/** How often the server looks whether the client of a running statement is still there. */
export const CONNECTION_CHECK_MS = 1_000;

/** How long a write waits for a connection of the pool (a new one, or a free one) by default. */
export const CONNECT_TIMEOUT_MS = 3_000;

/** How a pool connects; every field has a default fit for one replica of the service. */
export interface PostgresPoolOptions {
  /** Connections at most (default 10): the grouped writes need few, the reads and leases the rest. */
  readonly max?: number;
  /** How long a new connection, or a free one, may take (default 3 s) before the write waiting for it fails. */
  readonly connectionTimeoutMillis?: number;
  /** How long one statement may go unanswered (default {@link QUERY_TIMEOUT_MS}). */
  readonly queryTimeoutMillis?: number;
  /** Where a connection lost while idle is reported. */
  readonly logger?: Logger;
}

/** The `application_name` the service's sessions show in `pg_stat_activity`. */
export const APPLICATION_NAME = "webhook-channel";

/**
 * A connection pool over `url`. pg parses the URL itself (pg-connection-string): its TLS
 * parameters (`sslmode`, `sslrootcert`, `sslcert`, `sslkey`) are honoured, and so is an
 * `application_name` in it, which wins over ours. A connection that dies while idle (the
 * server restarted, a proxy cut it) makes the pool emit `error`: without a listener that
 * would end the process, so it is logged and the pool opens a new one when next asked.
 */
export function openPostgresPool(url: string, options: PostgresPoolOptions = {}): pg.Pool {
  const pool = new pg.Pool({
    connectionString: url,
    application_name: APPLICATION_NAME,
    max: options.max ?? 10,
    connectionTimeoutMillis: options.connectionTimeoutMillis ?? CONNECT_TIMEOUT_MS,
    query_timeout: options.queryTimeoutMillis ?? QUERY_TIMEOUT_MS,
    // Server-side bounds of every session: a statement, and a transaction left idle by a client
    // that vanished, are stopped there too.
    options: `-c statement_timeout=${STATEMENT_TIMEOUT_MS} -c idle_in_transaction_session_timeout=${4 * QUERY_TIMEOUT_MS}`,
    idleTimeoutMillis: 30_000,
    // TCP keep-alive, so that a connection to a vanished server is found dead in seconds, not hours.
    keepAlive: true,
    keepAliveInitialDelayMillis: 10_000,
    // pg-pool awaits this before it hands the connection out, so it never runs beside the first
    // query. No sequential scans: the generic plan of a named statement (see
    // `named-statements.ts`), made while a table was small, would otherwise scan the table on
    // every call once it had grown; the few statements that read a whole table allow them again
    // ({@link withSequentialScans}). Set here rather than in the startup options, which an
    // `options` parameter in the URL replaces and which a pooler may drop. The check interval is
    // set apart: a server older than Postgres 14 does not know it, and would refuse the
    // connection; there the statement timeout alone cancels.
    onConnect: async (client) => {
      await client.query("SET enable_seqscan = off");
      await client.query(`SET client_connection_check_interval = ${CONNECTION_CHECK_MS}`).catch(() => undefined);
    },
  });
  const logger = options.logger ?? silentLogger;
  pool.on("error", (error) => {
    logger.warn("a postgres connection was lost; the pool opens another when needed", {
      ...describePostgres(url),
      error: postgresErrorMessage(error),
    });
  });
  return pool;
}

/**
 * Runs `work` in one transaction on one connection of `pool`: committed when it resolves,
 * rolled back when it throws. A connection whose rollback failed too is dropped, not reused.
 * While it is held, the connection's own `error` (the server ended it: a restart, a failover)
 * is listened for: a checked-out client has no other listener, and pg would throw it out of
 * the event loop, ending the process; the statement under way or the next one fails instead.
 */
export async function inTransaction<T>(pool: pg.Pool, work: (client: pg.PoolClient) => Promise<T>): Promise<T> {
  const client = await pool.connect();
  let lost: unknown;
  const onError = (error: unknown): void => {
    lost ??= error;
  };
  client.on("error", onError);
  const release = (broken: boolean): void => {
    client.off("error", onError);
    client.release(broken || lost !== undefined);
  };
  try {
    await client.query("BEGIN");
    const result = await work(client);
    await client.query("COMMIT");
    release(false);
    return result;
  } catch (error) {
    const broken =
      lost !== undefined ||
      (await client.query("ROLLBACK").then(
        () => false,
        () => true,
      ));
    release(broken);
    throw error;
  }
}

/**
 * Runs `work` in one transaction with sequential scans allowed, which the pool's sessions turn off
 * (see {@link openPostgresPool}): for a statement that reads a whole table, which a scan reads
 * faster than an index does.
 */
export function withSequentialScans<T>(pool: pg.Pool, work: (client: pg.PoolClient) => Promise<T>): Promise<T> {
  return inTransaction(pool, async (client) => {
    await client.query("SET LOCAL enable_seqscan = on");
    return work(client);
  });
}

/**
 * A statement with its own client-side time limit (pg reads `query_timeout` per query; its
 * types do not list it): for migrations, which may wait and take long, and for the health probe,
 * which must answer sooner than a write.
 */
export function timedQuery(text: string, timeoutMs: number, values: unknown[] = []): pg.QueryConfig {
  const config: pg.QueryConfig & { readonly query_timeout: number } = { text, values, query_timeout: timeoutMs };
  return config;
}

/** A port as a number, as the other lines give one; a list of hosts' ports stays as written. */
