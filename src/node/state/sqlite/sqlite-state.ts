import { join } from "node:path";
import Database from "better-sqlite3";
import { migrate } from "./schema-migrations.js";
import type { StateDb } from "./state-db.js";
import { makeStateDir } from "./state-dir-folder.js";
import { STATE_FILE } from "./state-file.js";

export type { StateDb } from "./state-db.js";

export { STATE_FILE } from "./state-file.js";

/**
 * Opens (creating if needed) the state database in `stateDir` and migrates it to the current
 * schema; throws when the file was written by a newer webhook-channel. WAL lets the CLI read
 * while the service writes; `synchronous = NORMAL` in WAL mode survives a process crash
 * (`kill -9`) with every committed transaction, fsyncing at checkpoints rather than per commit.
 */
export function openStateDb(stateDir: string): StateDb {
  makeStateDir(stateDir);
  const db = new Database(join(stateDir, STATE_FILE));
  try {
    // First, so that the other thread's connection migrating the same file makes this one wait.
    db.pragma("busy_timeout = 5000");
    db.pragma("journal_mode = WAL");
    db.pragma("synchronous = NORMAL");
    migrate(db);
  } catch (error) {
    db.close();
    throw error;
  }
  return db;
}
