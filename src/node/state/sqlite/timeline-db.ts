import { join } from "node:path";
import Database from "better-sqlite3";
import type { StateDb } from "./state-db.js";
import { makeStateDir } from "./state-dir-folder.js";
import { TIMELINE_FILE } from "./state-file.js";

export { TIMELINE_FILE } from "./state-file.js";

/**
 * The timeline's layout version (`PRAGMA user_version`). 2 added the channel's and the
 * status's indexes; every statement of the layout is idempotent, so a file of any older
 * version is brought up to date by running it again.
 */
export const TIMELINE_VERSION = 2;

/**
 * Opens (creating if needed) the timeline database in `stateDir`. A row per message with its
 * events as JSON lines, appended as they come; counts per minute for the console's charts.
 * Message ids are time-ordered, so the key and the acceptance index grow at their end, and the
 * conversation index is the conversation alone, the narrow key that keeps an insert cheap. The
 * channel's and the status's indexes end with the acceptance order, so that a page filtered by
 * either (the console's "dead letters of this channel", "what waits") is a search that hands
 * rows back in the page's order rather than a walk of the whole list. Their price is on the
 * writer thread, off the messages' path: an entry each per message, and the status's entry moved
 * when a later batch changes the status.
 */
export function openTimelineDb(stateDir: string): StateDb {
  makeStateDir(stateDir);
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
    // In one transaction that takes the write lock first: the service's two connections (its
    // reader and its writer thread) and a CLI may open an older file at once.
    if (version < TIMELINE_VERSION) db.transaction(() => db.exec(LAYOUT)).immediate();
  } catch (error) {
    db.close();
    throw error;
  }
  return db;
}

const LAYOUT = `
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
CREATE INDEX IF NOT EXISTS timeline_channel ON timeline (channel, accepted_at, message_id);
CREATE INDEX IF NOT EXISTS timeline_status ON timeline (status, accepted_at, message_id);
CREATE TABLE IF NOT EXISTS timeline_activity (
  minute INTEGER NOT NULL,
  series TEXT NOT NULL,
  count INTEGER NOT NULL,
  PRIMARY KEY (minute, series)
);
PRAGMA user_version = ${TIMELINE_VERSION};
`;
