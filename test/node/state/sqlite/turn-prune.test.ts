import { mkdtemp } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { retentionCutoff } from "../../../../src/core/conversation/memory-retention.js";
import { openSqliteBackend } from "../../../../src/node/state/sqlite/sqlite-backend.js";
import { createSqliteConversationStore } from "../../../../src/node/state/sqlite/sqlite-conversation-store.js";
import { openStateDb, type StateDb } from "../../../../src/node/state/sqlite/sqlite-state.js";
import { pruneSqliteTurns } from "../../../../src/node/state/sqlite/sqlite-turn-prune.js";
import { createLogSink } from "../../../support/log-sink.js";

const HOUR = 3_600_000;
const NOW = 10_000 * HOUR;

const opened: StateDb[] = [];
afterEach(() => {
  for (const db of opened.splice(0)) if (db.open) db.close();
});

async function freshDb(): Promise<StateDb> {
  const db = openStateDb(await mkdtemp(join(tmpdir(), "webhook-channel-turn-prune-")));
  opened.push(db);
  return db;
}

/** Stores a turn as the conversation store does, at `at`. */
function insert(db: StateDb, conversation: string, text: string, at: number): void {
  db.prepare("INSERT INTO turns (conversation, turn, at) VALUES (?, ?, ?)").run(
    conversation,
    JSON.stringify({ role: "user", text, at }),
    at,
  );
}

const textsIn = (db: StateDb): string[] =>
  db
    .prepare<[], { turn: string }>("SELECT turn FROM turns ORDER BY seq")
    .all()
    .map((row) => (JSON.parse(row.turn) as { text: string }).text);

describe("the SQLite conversation memory's retention", () => {
  it("leaves turns older than the retention out of the history, by the store's clock", async () => {
    const db = await freshDb();
    let now = NOW;
    const store = createSqliteConversationStore(db, 100, undefined, { hours: 2, now: () => now });
    await store.append("c", [
      { role: "user", text: "first", at: NOW - HOUR },
      { role: "assistant", text: "second", at: NOW },
    ]);
    expect((await store.history("c", 10)).map((turn) => turn.text)).toEqual(["first", "second"]);
    now += HOUR + 1;
    expect((await store.history("c", 10)).map((turn) => turn.text)).toEqual(["second"]);
    now += HOUR;
    expect(await store.history("c", 10)).toEqual([]);
  });

  it("prunes every turn older than the cutoff, of every conversation, and keeps the rest", async () => {
    const db = await freshDb();
    const cutoff = retentionCutoff(NOW, 24);
    insert(db, "a", "a old", cutoff - 2);
    insert(db, "b", "b old", cutoff - 1);
    insert(db, "a", "a at the cutoff", cutoff);
    insert(db, "b", "b new", NOW);
    expect(await pruneSqliteTurns(db, cutoff)).toBe(2);
    expect(textsIn(db)).toEqual(["a at the cutoff", "b new"]);
    expect(await pruneSqliteTurns(db, cutoff)).toBe(0);
  });

  it("prunes in batches, yielding between them, until none is left", async () => {
    const db = await freshDb();
    for (let index = 0; index < 7; index += 1) insert(db, `c${index}`, `old ${index}`, NOW - HOUR - index);
    insert(db, "c0", "new", NOW);
    const pruning = pruneSqliteTurns(db, NOW - HOUR + 1, undefined, 3);
    // The first batch ran at once; the others wait for the event loop.
    expect(textsIn(db)).toHaveLength(5);
    expect(await pruning).toBe(7);
    expect(textsIn(db)).toEqual(["new"]);
  });

  it("finds the turns to prune through the turns_at index", async () => {
    const db = await freshDb();
    const plan = db
      .prepare<[number, number], { detail: string }>(
        "EXPLAIN QUERY PLAN DELETE FROM turns WHERE seq IN (SELECT seq FROM turns WHERE at < ? ORDER BY at LIMIT ?)",
      )
      .all(NOW, 10)
      .map((row) => row.detail)
      .join("\n");
    expect(plan).toMatch(/USING (COVERING )?INDEX turns_at/);
  });

  it("stops, without an error, once the database is closed", async () => {
    const db = await freshDb();
    for (let index = 0; index < 4; index += 1) insert(db, "c", `old ${index}`, NOW - HOUR);
    const pruning = pruneSqliteTurns(db, NOW, undefined, 2);
    db.close();
    expect(await pruning).toBe(2);
  });

  it("is what the SQLite backend's pruneConversations runs", async () => {
    const dir = await mkdtemp(join(tmpdir(), "webhook-channel-turn-prune-"));
    const backend = openSqliteBackend(dir, createLogSink().logger, "service", {}, { hours: 1, now: () => NOW });
    try {
      await backend.conversations.append("c", [
        { role: "user", text: "old", at: NOW - 2 * HOUR },
        { role: "assistant", text: "new", at: NOW },
      ]);
      expect(await backend.pruneConversations(retentionCutoff(NOW, 1))).toBe(1);
      expect((await backend.conversations.history("c", 10)).map((turn) => turn.text)).toEqual(["new"]);
    } finally {
      await backend.close();
    }
  });

  it("deletes nothing once another process has taken the file over", async () => {
    const dir = await mkdtemp(join(tmpdir(), "webhook-channel-turn-prune-"));
    const first = openSqliteBackend(dir, createLogSink().logger, "service", {}, { hours: 1, now: () => NOW });
    try {
      await first.conversations.append("c", [{ role: "user", text: "old", at: NOW - 2 * HOUR }]);
      // A second start on the same state_dir claims it (the first one was paused, or started twice).
      const second = openSqliteBackend(dir, createLogSink().logger, "service", {}, { hours: 1, now: () => NOW });
      try {
        await expect(first.pruneConversations(retentionCutoff(NOW, 1))).rejects.toMatchObject({ code: "lane_fenced" });
        expect(await second.pruneConversations(retentionCutoff(NOW, 1))).toBe(1);
      } finally {
        await second.close();
      }
    } finally {
      await first.close();
    }
  });
});
