/** A running private cluster (see postgres-cluster.mjs). */
export interface PostgresCluster {
  /** `postgres://postgres@127.0.0.1:<port>/postgres`, trust authentication. */
  readonly url: string;
  readonly port: number;
  /** Stops the server (fast shutdown: connections are cut) and keeps its data, for `resume`. */
  halt(): Promise<void>;
  /** Starts a halted server again, on the same port with the same data. */
  resume(): Promise<void>;
  /**
   * Pauses every process of the cluster (SIGSTOP to the postmaster and each of its children), as
   * a frozen VM or a stalled primary would: connections stay open and nothing answers.
   */
  freeze(): Promise<void>;
  /** The postmaster's process id and those of the processes it started (backends, WAL writer...). */
  processes(): Promise<{ postmaster: number; children: number[] }>;
  /** Resumes what {@link freeze} paused. */
  thaw(): Promise<void>;
  /** Stops the server and removes its data. */
  stop(): Promise<void>;
}

/** The folder of `initdb` and `pg_ctl`, or undefined when Postgres is not installed. */
export function postgresBinDir(): string | undefined;

/**
 * Starts a cluster; `durable: false` (the default, for tests) turns fsync off; `settings` are
 * more server settings as `name=value` (no spaces), each passed as `-c`.
 */
export function startPostgresCluster(options?: {
  durable?: boolean;
  settings?: readonly string[];
}): Promise<PostgresCluster>;

/** Creates the empty database `name` (letters, digits, underscores) in the cluster of `clusterUrl`; returns its URL. */
export function createDatabase(clusterUrl: string, name: string): Promise<string>;
