import { existsSync } from "node:fs";
import { join } from "node:path";
import Database from "better-sqlite3";
import { migrate, SCHEMA_VERSION } from "./schema-migrations.js";
import type { StateDb } from "./state-db.js";
import { makeStateDir } from "./state-dir-folder.js";
import { STATE_FILE } from "./state-file.js";

export type { StateDb } from "./state-db.js";

export { STATE_FILE } from "./state-file.js";

/** What opening a state file changed of its layout (see `migrated` of {@link openStateDb}). */
export interface StateLayoutChange {
  /** The layout version the file had: 0 for a new file or 0.1.0's. */
  readonly from: number;
  readonly to: number;
  /** The file did not exist. */
  readonly created: boolean;
}

/**
 * Opens (creating if needed) the state database in `stateDir` and migrates it to the current
 * schema (telling `migrated` when it changed the layout, so that an upgrade says so); throws
 * when the file was written by a newer webhook-channel. WAL lets the CLI read
 * while the service writes; `synchronous = NORMAL` in WAL mode survives a process crash
 * (`kill -9`) with every committed transaction, fsyncing at checkpoints rather than per commit.
 */
export function openStateDb(stateDir: string, migrated?: (change: StateLayoutChange) => void): StateDb {
  makeStateDir(stateDir);
  const path = join(stateDir, STATE_FILE);
  const created = !existsSync(path);
  const db = new Database(path);
  try {
    // First, so that the other thread's connection migrating the same file makes this one wait.
    db.pragma("busy_timeout = 5000");
    db.pragma("journal_mode = WAL");
    db.pragma("synchronous = NORMAL");
    const from = migrate(db);
    if (from < SCHEMA_VERSION) migrated?.({ from, to: SCHEMA_VERSION, created });
  } catch (error) {
    db.close();
    throw error;
  }
  return db;
}
