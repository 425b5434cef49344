import { mkdirSync } from "node:fs";
import { join } from "node:path";
import Database from "better-sqlite3";

/** An open state database. */
export type StateDb = Database.Database;

/** File name of the state database inside `state_dir`. */
export const STATE_FILE = "webhook-channel.sqlite";

const SCHEMA = `
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
`;

/**
 * Opens (creating if needed) the state database in `stateDir`. WAL lets the CLI read while
 * the service writes; `synchronous = NORMAL` in WAL mode survives a process crash
 * (`kill -9`) with every committed transaction, fsyncing at checkpoints rather than per commit.
 */
export function openStateDb(stateDir: string): StateDb {
  mkdirSync(stateDir, { recursive: true });
  const db = new Database(join(stateDir, STATE_FILE));
  db.pragma("journal_mode = WAL");
  db.pragma("synchronous = NORMAL");
  db.pragma("busy_timeout = 5000");
  db.exec(SCHEMA);
  return db;
}
