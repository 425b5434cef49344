import type { MeteredSql } from "../metered-sql.js";

/**
 * Creates the tables of a {@link ConversationObject} when they are missing. Idempotent and
 * synchronous, so it runs in the constructor before any call is delivered, and again after
 * the expiry alarm's `deleteAll()` dropped them. Tables only ever get added: an object
 * written by an older version gains the new ones the first time it is constructed.
 *
 * Each table has one class that writes it:
 *
 * - `turns` (`ConversationMemory`): the conversation's memory, last turns only.
 * - `counters` (`ConversationCounters`): the floor of the reply `sequence` counter, and
 *   `touched_at` (when the conversation was last active, for the expiry).
 * - `jobs` (`ParkedJobs`): jobs parked by message id until the inbound consumer hands them
 *   over (messages too large for a queue message), or until the dead-letter consumer reads
 *   them (dead letters too large for one).
 * - `lane` (`ConversationLane`): the conversation's pending jobs, run one at a time in
 *   acceptance order (a lone job handed over to an empty lane only once it must wait).
 * - `answered` (`AnsweredIds`): ids of messages answered or dead-lettered in the last day at
 *   least, so that a queue message delivered again is not answered twice, with the last
 *   `sequence` of their replies (the counter reads it); and the progress of a running job once
 *   it has replies (`job`; `open` while the job has no lane row), so that answering it writes
 *   one row. Old rows are taken over by new ids rather than deleted.
 * - `job_pieces` (`JobPieces`): the JSON of a job too long for one value of `answered`, `jobs`
 *   or `lane`, in pieces, by owner table and message id (the row holds a small stand-in).
 * - `dead_letters` (`OldDeadLetters`): where version 0.1.0 kept the conversation's dead
 *   letters; emptied into the dead-letter store, and no longer written.
 *
 * `lane` and `answered` are `WITHOUT ROWID`: their primary key is the table itself, so an
 * insert writes one row, not a row and an index entry (rows written are what is billed).
 */
export function createConversationTables(sql: MeteredSql): void {
  sql.run(`CREATE TABLE IF NOT EXISTS turns (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    role TEXT NOT NULL,
    text TEXT,
    media_url TEXT,
    media_type TEXT,
    at INTEGER NOT NULL
  )`);
  sql.run("CREATE TABLE IF NOT EXISTS counters (name TEXT PRIMARY KEY, value INTEGER NOT NULL)");
  sql.run("CREATE TABLE IF NOT EXISTS jobs (id TEXT PRIMARY KEY, job TEXT NOT NULL)");
  sql.run(`CREATE TABLE IF NOT EXISTS lane (
    id TEXT PRIMARY KEY,
    received_at INTEGER NOT NULL,
    arrival INTEGER NOT NULL,
    started INTEGER NOT NULL DEFAULT 0,
    next_at INTEGER NOT NULL,
    job TEXT NOT NULL,
    letter TEXT
  ) WITHOUT ROWID`);
  sql.run(
    "CREATE TABLE IF NOT EXISTS answered (id TEXT PRIMARY KEY, at INTEGER NOT NULL, last_seq INTEGER, job TEXT, open INTEGER) WITHOUT ROWID",
  );
  // An object of an earlier version has `answered` without `last_seq` or `job`; reading the
  // columns is one small read per construction, and each column is added once.
  const columns = sql.all<{ name: string }>("SELECT name FROM pragma_table_info('answered')");
  if (!columns.some((column) => column.name === "last_seq"))
    sql.run("ALTER TABLE answered ADD COLUMN last_seq INTEGER");
  if (!columns.some((column) => column.name === "job")) sql.run("ALTER TABLE answered ADD COLUMN job TEXT");
  if (!columns.some((column) => column.name === "open")) sql.run("ALTER TABLE answered ADD COLUMN open INTEGER");
  sql.run(
    "CREATE TABLE IF NOT EXISTS job_pieces (owner TEXT NOT NULL, id TEXT NOT NULL, piece INTEGER NOT NULL, data TEXT NOT NULL, PRIMARY KEY (owner, id, piece)) WITHOUT ROWID",
  );
  sql.run(
    "CREATE TABLE IF NOT EXISTS dead_letters (id TEXT PRIMARY KEY, letter TEXT NOT NULL, died_at INTEGER NOT NULL)",
  );
}
