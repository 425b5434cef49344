import { mkdtemp } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { describe, expect, it } from "vitest";
import type { DeadLetter } from "../../../../src/core/dead-letters/dead-letter.js";
import type { Job } from "../../../../src/core/lifecycle/job.js";
import { listDeadLetters } from "../../../../src/node/state/sqlite/dead-letters.js";
import { MIGRATIONS, SCHEMA_VERSION } from "../../../../src/node/state/sqlite/schema-migrations.js";
import { openSqliteBackend } from "../../../../src/node/state/sqlite/sqlite-backend.js";
import { createSqliteConversationStore } from "../../../../src/node/state/sqlite/sqlite-conversation-store.js";
import { createSqliteIdempotencyStore } from "../../../../src/node/state/sqlite/sqlite-idempotency-store.js";
import {
  openStateDb,
  STATE_FILE,
  type StateDb,
  type StateLayoutChange,
} from "../../../../src/node/state/sqlite/sqlite-state.js";
import { createLogSink } from "../../../support/log-sink.js";
import { openSqliteLanes } from "../../../support/sqlite-lanes.js";

const newStateDir = () => mkdtemp(join(tmpdir(), "webhook-channel-schema-"));

// The layout 0.1.0 wrote, verbatim, with user_version left at 0. A fixture, not the code's
// schema: it must not follow later migrations.
const SCHEMA_0_1_0 = `
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

const job = (id: string): Job => ({
  message: {
    id,
    channel: "webhook",
    receivedAt: 1_000,
    idempotencyKey: `key-${id}`,
    message: { senderId: "a", conversationId: "c1", text: id },
  },
  delivered: 0,
  attempts: 0,
});

const userVersion = (db: StateDb): unknown => db.pragma("user_version", { simple: true });

/** Opens the state file as 0.1.0 did, outside `openStateDb`. */
function openRaw(stateDir: string): StateDb {
  const db = new Database(join(stateDir, STATE_FILE));
  db.pragma("journal_mode = WAL");
  return db;
}

describe("state schema versions", () => {
  it("creates a new state file at the current schema version", async () => {
    const db = openStateDb(await newStateDir());
    expect(userVersion(db)).toBe(SCHEMA_VERSION);
    db.close();
  });

  it("opens a state file written by the previous release (user_version 0) and keeps its jobs", async () => {
    const stateDir = await newStateDir();
    const letter: DeadLetter = {
      job: { ...job("dead"), attempts: 5 },
      error: { code: "upstream_unavailable", message: "503", retryable: true, status: 503 },
      attempts: 5,
      diedAt: 2_000,
    };
    const old = openRaw(stateDir);
    old.exec(SCHEMA_0_1_0);
    old.prepare("INSERT INTO jobs (id, job) VALUES (?, ?)").run("m1", JSON.stringify(job("m1")));
    old
      .prepare("INSERT INTO idempotency (channel, key, message_id, conversation_id, expires_at) VALUES (?, ?, ?, ?, ?)")
      .run("webhook", "key-m1", "m1", "c1", 10_000);
    old
      .prepare("INSERT INTO dead_letters (id, channel, letter, died_at) VALUES (?, ?, ?, ?)")
      .run("dead", "webhook", JSON.stringify(letter), letter.diedAt);
    old.prepare("INSERT INTO sequences (conversation, last) VALUES (?, ?)").run("c1", 3);
    old
      .prepare("INSERT INTO turns (conversation, turn, at) VALUES (?, ?, ?)")
      .run("c1", JSON.stringify({ role: "user", text: "hello", at: 1_500 }), 1_500);
    expect(userVersion(old)).toBe(0);
    old.close();

    const db = openStateDb(stateDir);
    expect(userVersion(db)).toBe(SCHEMA_VERSION);
    expect(
      openSqliteLanes(db)
        .readPending(0, 100)
        .map((row) => row.job),
    ).toEqual([job("m1")]);
    expect(
      await createSqliteIdempotencyStore(db).reserve(
        "webhook",
        "key-m1",
        { messageId: "m2", conversationId: "c1" },
        5_000,
      ),
    ).toEqual({
      record: { messageId: "m1", conversationId: "c1" },
      committed: true,
    });
    expect(listDeadLetters(db)).toEqual([{ id: "dead", channel: "webhook", letter }]);
    const lanes = openSqliteLanes(db);
    expect(await lanes.lastSequence({ key: "c1", epoch: lanes.epoch })).toBe(3);
    // Read at the time the turn was written: the retention counts from the reader's clock.
    const retention = { hours: 720, now: () => 2_000 };
    expect(await createSqliteConversationStore(db, undefined, undefined, retention).history("c1", 10)).toEqual([
      { role: "user", text: "hello", at: 1_500 },
    ]);
    db.close();
  });

  it("adds the turns' time index to a file of the previous layout (version 3), keeping its turns", async () => {
    const stateDir = await newStateDir();
    const old = openRaw(stateDir);
    // Released migrations never change: running those up to version 3 writes that layout.
    for (const migration of MIGRATIONS.filter((entry) => entry.version <= 3)) migration.up(old);
    old.pragma("user_version = 3");
    old
      .prepare("INSERT INTO turns (conversation, turn, at) VALUES (?, ?, ?)")
      .run("c1", JSON.stringify({ role: "user", text: "hello", at: 1_500 }), 1_500);
    const indexes = (db: StateDb) =>
      db
        .prepare<[], { name: string }>("SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'turns'")
        .all()
        .map((row) => row.name);
    expect(indexes(old)).not.toContain("turns_at");
    old.close();

    const db = openStateDb(stateDir);
    expect(userVersion(db)).toBe(SCHEMA_VERSION);
    expect(indexes(db)).toContain("turns_at");
    const retention = { hours: 1, now: () => 2_000 };
    expect(await createSqliteConversationStore(db, undefined, undefined, retention).history("c1", 10)).toEqual([
      { role: "user", text: "hello", at: 1_500 },
    ]);
    db.close();
  });

  it("stamps the counters of a file of the previous layout (version 5) as used when it is brought up to date", async () => {
    const stateDir = await newStateDir();
    const old = openRaw(stateDir);
    for (const migration of MIGRATIONS.filter((entry) => entry.version <= 5)) migration.up(old);
    old.pragma("user_version = 5");
    old.prepare("INSERT INTO sequences (conversation, last) VALUES (?, ?)").run("7:webhook:c1", 4);
    old.close();

    const before = Date.now();
    const backend = openSqliteBackend(stateDir, createLogSink().logger);
    try {
      // Not idle yet: a counter kept before the layout counts from the upgrade, not from never.
      expect(await backend.forgetIdleConversations(before - 1)).toBe(0);
      const row = backend.sqlite?.db.prepare("SELECT last, used_at FROM sequences").get() as { used_at: number };
      expect(row).toEqual({ last: 4, used_at: expect.any(Number) });
      expect(row.used_at).toBeGreaterThanOrEqual(before);
      expect(await backend.forgetIdleConversations(Date.now() + 1)).toBe(1);
    } finally {
      await backend.close();
    }
  });

  it("says what opening a file changed of its layout: created, brought up from 0.1.0's, or nothing", async () => {
    const changes: StateLayoutChange[] = [];
    const fresh = await newStateDir();
    openStateDb(fresh, (change) => changes.push(change)).close();
    const old = await newStateDir();
    const raw = openRaw(old);
    raw.exec(SCHEMA_0_1_0);
    raw.close();
    openStateDb(old, (change) => changes.push(change)).close();
    openStateDb(old, (change) => changes.push(change)).close();
    expect(changes).toEqual([
      { from: 0, to: SCHEMA_VERSION, created: true },
      { from: 0, to: SCHEMA_VERSION, created: false },
    ]);
  });

  it("refuses a state file from a newer version", async () => {
    const stateDir = await newStateDir();
    openStateDb(stateDir).close();
    const newer = openRaw(stateDir);
    newer.pragma(`user_version = ${SCHEMA_VERSION + 1}`);
    newer.close();

    expect(() => openStateDb(stateDir)).toThrow(
      new RegExp(`version ${SCHEMA_VERSION + 1}\\b.*up to version ${SCHEMA_VERSION}\\b.*upgrade webhook-channel`),
    );
    // Refused, not downgraded: the newer release can still open its file.
    const after = openRaw(stateDir);
    expect(userVersion(after)).toBe(SCHEMA_VERSION + 1);
    after.close();
  });

  it("runs each migration once", async () => {
    const stateDir = await newStateDir();
    const first = openStateDb(stateDir);
    first.prepare("INSERT INTO jobs (id, job) VALUES (?, ?)").run("m1", JSON.stringify(job("m1")));
    first.close();

    const second = openStateDb(stateDir);
    expect(userVersion(second)).toBe(SCHEMA_VERSION);
    expect(
      openSqliteLanes(second)
        .readPending(0, 100)
        .map((row) => row.job),
    ).toEqual([job("m1")]);
    second.close();
  });
});
