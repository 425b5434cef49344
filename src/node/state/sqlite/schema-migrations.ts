import type { StateDb } from "./state-db.js";

/** One step of the state database's schema, applied once, in order, to every state file. */
export interface SchemaMigration {
  /** The `PRAGMA user_version` of a file once this migration ran: 1, 2, 3… without gaps. */
  readonly version: number;
  readonly description: string;
  readonly up: (db: StateDb) => void;
}

/**
 * Every schema change, oldest first. A released migration never changes: files in the field
 * already ran it, so a new layout is a new entry at the end.
 */
export const MIGRATIONS: readonly SchemaMigration[] = [
  {
    version: 1,
    // Exactly the 0.1.0 layout. 0.1.0 left user_version at 0 and created these tables with
    // IF NOT EXISTS, so running this on its files is a no-op that only stamps them version 1.
    description: "jobs, dead letters, sequences, idempotency keys and conversation turns (the 0.1.0 layout)",
    up: (db) => {
      db.exec(`
CREATE TABLE IF NOT EXISTS jobs (
  seq INTEGER PRIMARY KEY AUTOINCREMENT,
  id TEXT NOT NULL UNIQUE,
  job TEXT NOT NULL,
  state TEXT NOT NULL DEFAULT 'pending'
);
CREATE INDEX IF NOT EXISTS jobs_state ON jobs (state);
CREATE TABLE IF NOT EXISTS dead_letters (
  id TEXT PRIMARY KEY,
  channel TEXT NOT NULL,
  letter TEXT NOT NULL,
  died_at INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS sequences (
  conversation TEXT PRIMARY KEY,
  last INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS idempotency (
  channel TEXT NOT NULL,
  key TEXT NOT NULL,
  message_id TEXT NOT NULL,
  conversation_id TEXT NOT NULL,
  expires_at INTEGER NOT NULL,
  PRIMARY KEY (channel, key)
);
CREATE TABLE IF NOT EXISTS turns (
  seq INTEGER PRIMARY KEY AUTOINCREMENT,
  conversation TEXT NOT NULL,
  turn TEXT NOT NULL,
  at INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS turns_conversation ON turns (conversation, seq);
`);
    },
  },
  {
    version: 2,
    // One service process runs a state file's lanes: each start claims the file by raising the
    // epoch, and every group of writes checks it first, so a process that was paused or frozen
    // while another took over writes nothing when it wakes.
    description: "meta: the epoch of the process that runs the lanes",
    up: (db) => {
      db.exec("CREATE TABLE IF NOT EXISTS meta (name TEXT PRIMARY KEY, value INTEGER NOT NULL)");
    },
  },
  {
    version: 3,
    // A receiver that is down stays known down across a restart: a service that restarts (or
    // crashes and restarts, again and again) during an outage holds its replies and probes on
    // the schedule, instead of spending each resumed job's attempts to find the outage again.
    description: "receivers: each channel's receiver circuit",
    up: (db) => {
      db.exec(
        "CREATE TABLE IF NOT EXISTS receivers (channel TEXT PRIMARY KEY, state TEXT NOT NULL, version INTEGER NOT NULL)",
      );
    },
  },
  {
    version: 4,
    // Conversation memory is kept for conversation_memory.retention_hours: the periodic prune
    // finds the turns older than that by their time, without reading the whole table.
    description: "turns_at: conversation turns by time, for the retention's prune",
    up: (db) => {
      db.exec("CREATE INDEX IF NOT EXISTS turns_at ON turns (at)");
    },
  },
  {
    version: 5,
    // A key reused for another body is refused (422) rather than answered with the first
    // message. Keys stored before have no fingerprint and answer any body, as they did.
    description: "idempotency.fingerprint: each key's request body, to refuse a key reused for another",
    up: (db) => {
      db.exec("ALTER TABLE idempotency ADD COLUMN fingerprint TEXT");
    },
  },
  {
    version: 6,
    // A conversation idle past IDLE_CONVERSATION_MS with nothing waiting is forgotten, as on
    // Workers, so that one row per conversation ever seen does not stay for good: each counter
    // says when it was last written. Counters of older files count as written when the file
    // was brought up to date (a constant default: no row is rewritten).
    description: "sequences.used_at: when each conversation's counter was last written, to forget idle ones",
    up: (db) => {
      db.exec(`ALTER TABLE sequences ADD COLUMN used_at INTEGER NOT NULL DEFAULT ${Date.now()}`);
    },
  },
  {
    version: 7,
    // Expired keys are deleted hourly while the service runs (they were only at its start, so a
    // service that ran for weeks kept every key it had seen): the prune finds them by their time.
    description: "idempotency_expires: idempotency keys by expiry, for the hourly prune",
    up: (db) => {
      db.exec("CREATE INDEX IF NOT EXISTS idempotency_expires ON idempotency (expires_at)");
    },
  },
  {
    version: 8,
    // Each dead letter kept trims its channel to its bound, newest first: through this index a
    // trim reads the channel's letters in order instead of sorting the whole table, and the
    // per-channel counts (`/readyz`, `/metrics`) read the index rather than the rows.
    description: "dead_letters_channel: dead letters by channel and time, for the bound's trim and the pages",
    up: (db) => {
      db.exec("CREATE INDEX IF NOT EXISTS dead_letters_channel ON dead_letters (channel, died_at, id)");
    },
  },
];

/** The schema version this code writes: the version of the last migration. */
export const SCHEMA_VERSION: number = MIGRATIONS.reduce((latest, migration) => {
  // A gap or a reordering would skip a migration on some files; fail at load, not in the field.
  if (migration.version !== latest + 1) {
    throw new Error(`schema migration ${migration.version} follows ${latest}: versions must run 1, 2, 3… in order`);
  }
  return migration.version;
}, 0);

function userVersion(db: StateDb): number {
  const version: unknown = db.pragma("user_version", { simple: true });
  if (typeof version !== "number") throw new Error(`${db.name}: PRAGMA user_version returned ${String(version)}`);
  return version;
}

function assertSupported(db: StateDb, version: number): void {
  // Older code cannot know what a newer layout means; writing to it could lose jobs.
  if (version > SCHEMA_VERSION) {
    throw new Error(
      `${db.name} has state schema version ${version}, but this webhook-channel supports up to version ${SCHEMA_VERSION}: it was written by a newer webhook-channel; upgrade webhook-channel to open it`,
    );
  }
}

/**
 * Brings the state database up to {@link SCHEMA_VERSION}, one transaction per migration, and
 * throws, migrating nothing, when the file comes from a newer webhook-channel. Returns the
 * version the file had (0: new, or 0.1.0's layout).
 */
export function migrate(db: StateDb): number {
  const found = userVersion(db);
  assertSupported(db, found);
  // An up-to-date file, the usual case, is opened without taking the write lock.
  for (const migration of MIGRATIONS.filter((entry) => entry.version > found)) {
    // IMMEDIATE takes the write lock before reading the version, so when the main thread and
    // the delivery thread open the same file at once, only one of them runs each migration.
    db.transaction(() => {
      const version = userVersion(db);
      assertSupported(db, version);
      if (version >= migration.version) return;
      migration.up(db);
      db.pragma(`user_version = ${migration.version}`);
    }).immediate();
  }
  return found;
}
