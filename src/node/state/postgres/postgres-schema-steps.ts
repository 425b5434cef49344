/** The steps of the Postgres schema, in order: what each version of the tables adds or changes. */

/** One step of the Postgres schema, applied once, in order, to every database. */
export interface PostgresMigration {
  /** The schema version once this migration ran: 1, 2, 3… without gaps. */
  readonly version: number;
  readonly description: string;
  /** The statements, run in the migration transaction (no parameters). */
  readonly sql: string;
  /**
   * Replicas of the older code cannot run beside the new layout (they would write what it no
   * longer reads): the migration is refused while any replica's lease is live.
   */
  readonly exclusive?: boolean;
  /** The locks its statements take on tables that exist before it (see `lockPendingTables`). */
  readonly locks?: readonly TableLock[];
}

/** A lock a step's statements take on one of the service's busy tables. */
export interface TableLock {
  readonly table: "lanes" | "idempotency" | "replicas" | "jobs" | "turns";
  readonly mode: "ACCESS EXCLUSIVE" | "SHARE" | "SHARE UPDATE EXCLUSIVE";
}

/** The schema every table lives in, so that the service shares a database with anything else. */
export const POSTGRES_SCHEMA = "webhook_channel";

/**
 * Every schema change, oldest first. A released migration never changes: databases in the
 * field already ran it, so a new layout is a new entry at the end.
 */
export const POSTGRES_MIGRATIONS: readonly PostgresMigration[] = [
  {
    version: 1,
    description: "jobs, sequences, idempotency keys, turns, dead letters, auth failures, replicas and lanes",
    // JSON is kept as text: nothing queries inside it, and text is parsed once, in the service.
    // Times the service compares with its clock are epoch ms (bigint); the replicas' lease
    // times are the database's own (timestamptz), so that replicas need not agree on a clock.
    // dead_letters.id is COLLATE "C": the admin list's order (died_at, id) and its cursor
    // compare ids bytewise, as SQLite and the Durable Object do, whatever the database's locale.
    // auth_failures holds one row per channel and address: its failure times within the
    // window (at most `max`), so that a check is one primary-key read and a failure one upsert.
    sql: `
CREATE TABLE webhook_channel.jobs (
  seq bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  id text NOT NULL UNIQUE,
  channel text NOT NULL,
  conversation text NOT NULL,
  job text NOT NULL,
  state text NOT NULL DEFAULT 'pending' CHECK (state IN ('pending', 'replay'))
);
CREATE INDEX jobs_conversation ON webhook_channel.jobs (conversation, seq);
CREATE INDEX jobs_replay ON webhook_channel.jobs (seq) WHERE state = 'replay';
CREATE TABLE webhook_channel.sequences (
  conversation text PRIMARY KEY,
  last bigint NOT NULL
);
CREATE TABLE webhook_channel.idempotency (
  channel text,
  key text,
  message_id text NOT NULL,
  conversation_id text NOT NULL,
  committed boolean NOT NULL DEFAULT false,
  expires_at bigint NOT NULL,
  PRIMARY KEY (channel, key)
);
CREATE INDEX idempotency_expires ON webhook_channel.idempotency (expires_at);
CREATE TABLE webhook_channel.turns (
  seq bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  conversation text NOT NULL,
  turn text NOT NULL,
  at bigint NOT NULL
);
CREATE INDEX turns_conversation ON webhook_channel.turns (conversation, seq);
CREATE TABLE webhook_channel.dead_letters (
  id text COLLATE "C" PRIMARY KEY,
  channel text NOT NULL,
  letter text NOT NULL,
  died_at bigint NOT NULL
);
CREATE INDEX dead_letters_channel ON webhook_channel.dead_letters (channel, died_at, id);
CREATE INDEX dead_letters_died ON webhook_channel.dead_letters (died_at, id);
CREATE TABLE webhook_channel.auth_failures (
  key text PRIMARY KEY,
  times bigint[] NOT NULL,
  warned_at bigint,
  expires_at bigint NOT NULL
);
CREATE INDEX auth_failures_expires ON webhook_channel.auth_failures (expires_at);
CREATE TABLE webhook_channel.replicas (
  id text PRIMARY KEY,
  started_at timestamptz NOT NULL DEFAULT now(),
  lease_until timestamptz NOT NULL
);
CREATE TABLE webhook_channel.lanes (
  conversation text PRIMARY KEY,
  channel text NOT NULL,
  owner text NOT NULL
);
CREATE INDEX lanes_owner ON webhook_channel.lanes (owner);
`,
  },
  {
    version: 2,
    description:
      "lanes carry the claim's epoch and the last reply number (sequences folded into them); receivers hold each channel's circuit; brain_pauses; jobs name the replica that stored them",
    // A replica of version 1 would number replies from the dropped table and write unfenced.
    exclusive: true,
    // A claim raises a lane's epoch, and every write for the conversation checks it in its own
    // statement (the fence). The last reply number lives in the same row, so that the write that
    // stores new replies moves it under the same check. A lane row now outlives its owner (owner
    // NULL: nobody runs it), so that the number survives; only the owned rows are indexed. A
    // channel's receiver circuit is one row every replica reads and writes over its version; a
    // brain's pause (after a 429 or 503) one row per server, which every replica obeys. A job
    // names the replica that stored it, and a lapsed replica is swept once: what a dead replica
    // left is found through these, not by reading every stored job.
    sql: `
ALTER TABLE webhook_channel.lanes ALTER COLUMN owner DROP NOT NULL;
ALTER TABLE webhook_channel.lanes ADD COLUMN epoch bigint NOT NULL DEFAULT 0;
ALTER TABLE webhook_channel.lanes ADD COLUMN last_seq bigint NOT NULL DEFAULT 0;
INSERT INTO webhook_channel.lanes AS l (conversation, channel, owner, last_seq)
  SELECT s.conversation,
         substr(s.conversation, strpos(s.conversation, ':') + 1, split_part(s.conversation, ':', 1)::int),
         NULL, s.last
  FROM webhook_channel.sequences s
  ON CONFLICT (conversation) DO UPDATE SET last_seq = GREATEST(l.last_seq, excluded.last_seq);
DROP TABLE webhook_channel.sequences;
DROP INDEX webhook_channel.lanes_owner;
CREATE INDEX lanes_owner ON webhook_channel.lanes (owner) WHERE owner IS NOT NULL;
CREATE TABLE webhook_channel.receivers (
  channel text PRIMARY KEY,
  state text NOT NULL,
  version bigint NOT NULL
);
ALTER TABLE webhook_channel.jobs ADD COLUMN stored_by text;
-- Not partial on the pending state: the planner would take such an index for one on the state,
-- and intersect it with jobs_conversation on every read of a conversation's pending jobs.
CREATE INDEX jobs_stored_by ON webhook_channel.jobs (stored_by);
ALTER TABLE webhook_channel.replicas ADD COLUMN swept boolean NOT NULL DEFAULT false;
ALTER TABLE webhook_channel.replicas ADD COLUMN gone boolean NOT NULL DEFAULT false;
CREATE TABLE webhook_channel.brain_pauses (
  target text PRIMARY KEY,
  until_ms bigint NOT NULL,
  status int NOT NULL
);
`,
  },
  {
    version: 3,
    description: "timeline: every message's events, and activity counts per minute",
    // A row per message with its events as JSON lines that any replica appends to, and counts
    // per minute that every replica adds to, for the console's charts. A page filtered by
    // channel or by status reads its index in the page's order (newest first) and stops at
    // the page's end, instead of reading every row of the timeline and sorting them.
    sql: `
CREATE TABLE webhook_channel.timeline (
  message_id text PRIMARY KEY,
  channel text NOT NULL,
  conversation_id text NOT NULL,
  status text NOT NULL,
  accepted_at bigint NOT NULL,
  updated_at bigint NOT NULL,
  events text NOT NULL
);
CREATE INDEX timeline_accepted ON webhook_channel.timeline (accepted_at, message_id);
CREATE INDEX timeline_conversation ON webhook_channel.timeline (conversation_id);
CREATE INDEX timeline_channel ON webhook_channel.timeline (channel, accepted_at DESC, message_id DESC);
CREATE INDEX timeline_status ON webhook_channel.timeline (status, accepted_at DESC, message_id DESC);
CREATE TABLE webhook_channel.timeline_activity (
  minute bigint NOT NULL,
  series text NOT NULL,
  count bigint NOT NULL,
  PRIMARY KEY (minute, series)
);
`,
  },
  {
    version: 4,
    description: "write_checks: the row each replica's probe of the database writes and commits",
    // A read answers while commits hang (a synchronous standby gone, storage that stalls on
    // flush): the probe proves that a write commits by committing one, to a row of its own.
    sql: `
CREATE TABLE webhook_channel.write_checks (
  replica text PRIMARY KEY,
  checked_at timestamptz NOT NULL
);
`,
  },
  {
    version: 5,
    description: "jobs: pages filled to 30%, so that saving a job's reply rewrites it in place",
    // A job is saved after its insert (its reply, stored before it is posted), larger than it
    // was. On a full page the new version goes to another page, with a lock record first and a
    // new entry in each of the table's indexes; with room on its own page it is a heap-only
    // update that touches no index. The table holds only unfinished jobs, so the space left free
    // is large only while a backlog lasts. Only pages written from now on are filled this way, by
    // this code and older code alike, which reads and writes the table as before.
    locks: [{ table: "jobs", mode: "SHARE UPDATE EXCLUSIVE" }],
    sql: `
ALTER TABLE webhook_channel.jobs SET (fillfactor = 30);
`,
  },
  {
    version: 6,
    description: "replicas.brain_calls: the brain calls each replica holds, per limiter",
    // A replica whose share of a brain's max_concurrency shrank (another joined) may still hold
    // calls begun under the larger one; the others read them here and wait for those slots.
    // A replica of an older version writes none, and is read as holding none, as before.
    locks: [{ table: "replicas", mode: "ACCESS EXCLUSIVE" }],
    sql: `
ALTER TABLE webhook_channel.replicas ADD COLUMN brain_calls jsonb;
`,
  },
  {
    version: 7,
    description: "turns_at: conversation turns by time, for the retention's prune",
    // Conversation memory is kept for conversation_memory.retention_hours: each replica's
    // periodic prune finds the turns older than that by their time, without reading the whole
    // table. Built in the migration's transaction, as every index here is (CONCURRENTLY cannot
    // run in one): writes to the table wait while it builds. Older code neither reads nor
    // needs it, and runs beside it.
    locks: [{ table: "turns", mode: "SHARE" }],
    sql: `
CREATE INDEX turns_at ON webhook_channel.turns (at);
`,
  },
  {
    version: 8,
    description: "idempotency.fingerprint: each key's request body, to refuse a key reused for another",
    // A key reused for another body is refused (422) rather than answered with the first
    // message. The value names its message (see `storedFingerprint`): a replica of an older
    // version, which runs beside this layout, moves a key to another message without touching
    // it, and the key then answers any body, as it did. IF NOT EXISTS: a database taken back
    // to the build before (this version's row deleted, the column left) is brought up again.
    locks: [{ table: "idempotency", mode: "ACCESS EXCLUSIVE" }],
    sql: `
ALTER TABLE webhook_channel.idempotency ADD COLUMN IF NOT EXISTS fingerprint text;
`,
  },
  {
    version: 9,
    description: "lanes.used_at: when each lane was last let go, to forget idle conversations",
    // A conversation idle past IDLE_CONVERSATION_MS with nothing waiting is forgotten, as on
    // Workers, so that a lane row per conversation ever seen does not stay for good. A row
    // nobody runs says when it was let go; the rows already there count as let go when the
    // layout is applied (a default evaluated once: no row is rewritten, and the table is locked
    // only for the catalog's change). Dropped first: a database taken back to the build before
    // (this version's row deleted) kept stamps that build never moved, and the step applied
    // again starts them afresh. No index: the pass walks the table by its key, so that neither
    // this step nor a lane's claim or release builds or moves an entry for it. Older code runs
    // beside it and never reads the column.
    locks: [{ table: "lanes", mode: "ACCESS EXCLUSIVE" }],
    sql: `
ALTER TABLE webhook_channel.lanes DROP COLUMN IF EXISTS used_at;
ALTER TABLE webhook_channel.lanes ADD COLUMN used_at timestamptz NOT NULL DEFAULT now();
`,
  },
];

/** The schema version this code writes: the version of the last migration. */
export const POSTGRES_SCHEMA_VERSION: number = POSTGRES_MIGRATIONS.reduce((latest, migration) => {
  // A gap or a reordering would skip a migration on some databases; fail at load, not in the field.
  if (migration.version !== latest + 1) {
    throw new Error(`postgres migration ${migration.version} follows ${latest}: versions must run 1, 2, 3… in order`);
  }
  return migration.version;
}, 0);
