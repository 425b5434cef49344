import type { MeteredSql } from "../metered-sql.js";

/**
 * Creates the dead-letter store's tables when missing (idempotent, synchronous, so it runs in
 * the object's constructor). `replay_at` is null for a listed letter and the time of its next
 * hand-back while it is being replayed, `marked_at` when that replay was asked for, `tries` its
 * failed hand-backs. The indexes serve the list's order, per channel and over all of them.
 * `counters` holds `dropped`: letters dropped over the bound, ever. `gone`: letters replayed or
 * deleted lately. `dead_letter_pieces`: the pieces after the first of a large letter.
 */
export function createDeadLetterTables(sql: MeteredSql): void {
  sql.run(`CREATE TABLE IF NOT EXISTS dead_letters (
    id TEXT PRIMARY KEY,
    channel TEXT NOT NULL,
    died_at INTEGER NOT NULL,
    pieces INTEGER NOT NULL,
    letter TEXT NOT NULL,
    replay_at INTEGER,
    marked_at INTEGER,
    tries INTEGER NOT NULL DEFAULT 0
  )`);
  sql.run("CREATE INDEX IF NOT EXISTS dead_letters_order ON dead_letters (died_at, id)");
  sql.run("CREATE INDEX IF NOT EXISTS dead_letters_channel ON dead_letters (channel, died_at, id)");
  sql.run("CREATE INDEX IF NOT EXISTS dead_letters_replay ON dead_letters (replay_at) WHERE replay_at IS NOT NULL");
  sql.run("CREATE TABLE IF NOT EXISTS counters (name TEXT PRIMARY KEY, value INTEGER NOT NULL)");
  sql.run(
    "CREATE TABLE IF NOT EXISTS gone (id TEXT PRIMARY KEY, died_at INTEGER NOT NULL, at INTEGER NOT NULL) WITHOUT ROWID",
  );
  // The prune reads only what it deletes, however many letters went lately.
  sql.run("CREATE INDEX IF NOT EXISTS gone_at ON gone (at)");
  sql.run(
    "CREATE TABLE IF NOT EXISTS dead_letter_pieces (id TEXT NOT NULL, piece INTEGER NOT NULL, data TEXT NOT NULL, PRIMARY KEY (id, piece)) WITHOUT ROWID",
  );
}
