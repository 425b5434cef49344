/**
 * The SQLite timeline's pages search an index for each filter (SQLite's own plan, through
 * `EXPLAIN QUERY PLAN`, of the statement the store prepares), and a timeline file of the first
 * layout (before the channel's and the status's indexes) opens, keeps its rows and gains them.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterEach, describe, expect, it } from "vitest";
import type { TimelinePageQuery } from "../../../../src/core/timeline/timeline-store.js";
import type { StateDb } from "../../../../src/node/state/sqlite/sqlite-state.js";
import { createSqliteTimelineStore } from "../../../../src/node/state/sqlite/sqlite-timeline-store.js";
import { openTimelineDb, TIMELINE_FILE, TIMELINE_VERSION } from "../../../../src/node/state/sqlite/timeline-db.js";
import { timelinePageSql } from "../../../../src/node/state/sqlite/timeline-page-sql.js";

// The layout of timeline version 1, verbatim. A fixture, not the code's layout: it must not
// follow later versions.
const LAYOUT_1 = `
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
PRAGMA user_version = 1;
`;

const opened: { dir: string; db: StateDb }[] = [];

afterEach(async () => {
  for (const { dir, db } of opened.splice(0)) {
    db.close();
    await rm(dir, { recursive: true, force: true });
  }
});

async function freshTimeline(): Promise<StateDb> {
  const dir = await mkdtemp(join(tmpdir(), "webhook-channel-timeline-"));
  const db = openTimelineDb(dir);
  opened.push({ dir, db });
  return db;
}

/** SQLite's plan for the page `query`, one line per step. */
function planOf(db: StateDb, query: TimelinePageQuery): string[] {
  const { sql, params } = timelinePageSql(query);
  return (db.prepare(`EXPLAIN QUERY PLAN ${sql}`).all(params) as { detail: string }[]).map((row) => row.detail);
}

const BEFORE = { acceptedAt: Date.UTC(2026, 10, 27), id: "0193c0de-0000-7000-8000-000000000000" };

describe("the SQLite timeline's pages", () => {
  it.each<[string, Omit<TimelinePageQuery, "limit">, RegExp]>([
    ["since", { since: BEFORE.acceptedAt }, /USING (COVERING )?INDEX timeline_accepted \(accepted_at>\?\)/],
    ["status", { status: "dead_letter" }, /USING (COVERING )?INDEX timeline_status \(status=\?\)/],
    ["channel", { channel: "webhook" }, /USING (COVERING )?INDEX timeline_channel \(channel=\?\)/],
    [
      "the cursor",
      { before: BEFORE },
      /USING (COVERING )?INDEX timeline_accepted \(\(accepted_at,message_id\)<\(\?,\?\)\)/,
    ],
    [
      "status, since and the cursor",
      { status: "waiting", since: 0, before: BEFORE },
      /USING (COVERING )?INDEX timeline_status \(status=\? AND accepted_at>\? AND \(accepted_at,message_id\)<\(\?,\?\)\)/,
    ],
    [
      "channel and the cursor",
      { channel: "webhook", before: BEFORE },
      /USING (COVERING )?INDEX timeline_channel \(channel=\? AND \(accepted_at,message_id\)<\(\?,\?\)\)/,
    ],
  ])("filtered by %s search an index that gives the page's order: no scan, no sort", async (_name, filters, index) => {
    const plan = planOf(await freshTimeline(), { ...filters, limit: 50 });
    expect(plan).toEqual([expect.stringMatching(/^SEARCH timeline /)]);
    expect(plan[0]).toMatch(index);
  });

  it("of a conversation search the conversation's index", async () => {
    const plan = planOf(await freshTimeline(), { conversationId: "c1", channel: "webhook", limit: 50 });
    expect(plan[0]).toMatch(/^SEARCH timeline USING INDEX timeline_conversation \(conversation_id=\?\)/);
    expect(plan.filter((step) => step.startsWith("SCAN"))).toEqual([]);
  });

  it("answer the same through one prepared statement per combination of filters", async () => {
    const store = createSqliteTimelineStore(await freshTimeline());
    const at = Date.UTC(2026, 10, 27);
    const subject = (id: string, channel: string, acceptedAt: number) => ({
      id,
      channel,
      conversationId: "c1",
      acceptedAt,
    });
    const messages = [subject("a", "one", at), subject("b", "two", at + 1), subject("c", "one", at + 2)];
    await store.write(
      messages.map((message) => ({ ...message, status: "accepted", updatedAt: message.acceptedAt, events: [] })),
      [],
    );
    const ids = async (query: TimelinePageQuery) => (await store.page(query)).map((row) => row.id);
    expect(await ids({ channel: "one", limit: 10 })).toEqual(["c", "a"]);
    expect(await ids({ channel: "two", limit: 10 })).toEqual(["b"]);
    expect(await ids({ channel: "one", before: { acceptedAt: at + 2, id: "c" }, limit: 10 })).toEqual(["a"]);
    expect(await ids({ since: at + 1, limit: 10 })).toEqual(["c", "b"]);
  });
});

describe("a timeline file of the first layout", () => {
  it("opens with its rows, and gains the channel's and the status's indexes", async () => {
    const dir = await mkdtemp(join(tmpdir(), "webhook-channel-timeline-"));
    const old = new Database(join(dir, TIMELINE_FILE));
    old.exec(LAYOUT_1);
    old
      .prepare(
        `INSERT INTO timeline (message_id, channel, conversation_id, status, accepted_at, updated_at, events)
         VALUES ('m1', 'webhook', 'c1', 'dead_letter', 1000, 2000, '')`,
      )
      .run();
    old.close();

    const db = openTimelineDb(dir);
    opened.push({ dir, db });
    expect(db.pragma("user_version", { simple: true })).toBe(TIMELINE_VERSION);
    const indexes = (
      db.prepare("SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'timeline'").all() as {
        name: string;
      }[]
    ).map((row) => row.name);
    expect(indexes).toEqual(expect.arrayContaining(["timeline_channel", "timeline_status"]));
    const store = createSqliteTimelineStore(db);
    expect((await store.page({ status: "dead_letter", limit: 10 })).map((row) => row.id)).toEqual(["m1"]);
    expect(planOf(db, { status: "dead_letter", limit: 10 })[0]).toMatch(/INDEX timeline_status/);

    // Opened again, as the writer thread and the CLI do: nothing to change.
    openTimelineDb(dir).close();
    expect(db.pragma("user_version", { simple: true })).toBe(TIMELINE_VERSION);
  });
});
