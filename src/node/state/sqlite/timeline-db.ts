import { mkdirSync } from "node:fs";
import { join } from "node:path";
import Database from "better-sqlite3";
import type { StateDb } from "./state-db.js";

/**
 * File name of the timeline database inside `state_dir`: a file of its own, so that writing the
 * timeline never holds the lock that accepted jobs and their progress wait for.
 */
export const TIMELINE_FILE = "timeline.sqlite";

/** The timeline's layout version (`PRAGMA user_version`). */
const TIMELINE_VERSION = 1;

/**
 * Opens (creating if needed) the timeline database in `stateDir`. A row per message with its
 * events as JSON lines, appended as they come; counts per minute for the console's charts.
 * Message ids are time-ordered, so the key and the acceptance index grow at their end, and the
 * conversation index is the conversation alone, the narrow key that keeps an insert cheap.
 */
export function openTimelineDb(stateDir: string): StateDb {
  mkdirSync(stateDir, { recursive: true });
  const db = new Database(join(stateDir, TIMELINE_FILE));
  try {
    db.pragma("busy_timeout = 5000");
    db.pragma("journal_mode = WAL");
    // A record, not a promise: a crash may lose the last batches, never a message.
    db.pragma("synchronous = OFF");
    const version = Number(db.pragma("user_version", { simple: true }));
    if (version > TIMELINE_VERSION) {
      throw new Error(
        `${join(stateDir, TIMELINE_FILE)} was written by a newer webhook-channel (timeline version ${version}); upgrade, or move the file away to start a new timeline`,
      );
    }
    if (version < TIMELINE_VERSION) {
      db.exec(`
CREATE TABLE IF NOT EXISTS timeline (
  message_id TEXT PRIMARY KEY,
  channel TEXT NOT NULL,
  conversation_id TEXT NOT NULL,
  status TEXT NOT NULL,
  accepted_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL,
  events TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS timeline_accepted ON timeline (accepted_at, message_id);
CREATE INDEX IF NOT EXISTS timeline_conversation ON timeline (conversation_id);
CREATE TABLE IF NOT EXISTS timeline_activity (
  minute INTEGER NOT NULL,
  series TEXT NOT NULL,
  count INTEGER NOT NULL,
  PRIMARY KEY (minute, series)
);
PRAGMA user_version = ${TIMELINE_VERSION};
`);
    }
  } catch (error) {
    db.close();
    throw error;
  }
  return db;
}
