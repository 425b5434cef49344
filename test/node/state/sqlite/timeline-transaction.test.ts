/**
 * The timeline writer's open transaction, on a real timeline file with a second connection
 * reading it as the admin API's reader and the CLI do: batches stay unseen until a commit, a
 * commit comes by itself, a failed batch leaves the others, and a failed commit says what it lost.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterEach, describe, expect, it, vi } from "vitest";
import type { TimelineWrite } from "../../../../src/core/timeline/timeline-store.js";
import { createSqliteTimelineStore } from "../../../../src/node/state/sqlite/sqlite-timeline-store.js";
import { openTimelineDb, TIMELINE_FILE } from "../../../../src/node/state/sqlite/timeline-db.js";
import {
  createTimelineTransaction,
  TIMELINE_COMMIT_MS,
} from "../../../../src/node/state/sqlite/timeline-transaction.js";
import type { TimelineWriterLoss } from "../../../../src/node/state/sqlite/timeline-writer-messages.js";

const T0 = Date.UTC(2026, 10, 29, 6, 0, 0);
const cleanup: (() => Promise<void> | void)[] = [];

afterEach(async () => {
  for (const step of cleanup.splice(0).reverse()) await step();
});

function written(id: string): TimelineWrite {
  return {
    id,
    channel: "webhook",
    conversationId: "conv",
    acceptedAt: T0,
    updatedAt: T0,
    status: "delivered",
    events: [{ type: "delivered", at: T0 }],
  };
}

/** A timeline file with the writer's connection and store, a transaction over it, and a reader. */
async function openWriter() {
  const dir = await mkdtemp(join(tmpdir(), "webhook-channel-timeline-transaction-"));
  const db = openTimelineDb(dir);
  const reader = new Database(join(dir, TIMELINE_FILE), { readonly: true });
  const losses: TimelineWriterLoss[] = [];
  const transaction = createTimelineTransaction(db, (loss) => losses.push(loss));
  cleanup.push(async () => {
    transaction.commit();
    reader.close();
    db.close();
    await rm(dir, { recursive: true, force: true });
  });
  const store = createSqliteTimelineStore(db);
  const seen = (): string[] =>
    (reader.prepare("SELECT message_id FROM timeline ORDER BY message_id").all() as { message_id: string }[]).map(
      (row) => row.message_id,
    );
  const write = (...ids: string[]): void => transaction.write(() => store.write(ids.map(written), []), ids.length);
  return { db, transaction, losses, seen, write };
}

describe("the timeline writer's transaction", () => {
  it("keeps batches from other connections until a commit, and commits by itself after a while", async () => {
    const { transaction, seen, write } = await openWriter();
    write("a", "b");
    write("c");
    expect(seen()).toEqual([]);
    transaction.commit();
    expect(seen()).toEqual(["a", "b", "c"]);
    const started = performance.now();
    write("d");
    await vi.waitFor(() => expect(seen()).toContain("d"), { timeout: 5 * TIMELINE_COMMIT_MS, interval: 20 });
    expect(performance.now() - started).toBeGreaterThanOrEqual(TIMELINE_COMMIT_MS - 50);
  });

  it("leaves the batches before one that fails, which is answered with its error", async () => {
    const { transaction, losses, seen, write } = await openWriter();
    write("a");
    expect(() =>
      transaction.write(() => {
        throw new Error("a batch that cannot be written");
      }, 1),
    ).toThrow("a batch that cannot be written");
    write("b");
    transaction.commit();
    expect(seen()).toEqual(["a", "b"]);
    expect(losses).toEqual([]);
  });

  it("says how many messages a commit that fails lost, and starts afresh", async () => {
    const { db, transaction, losses, seen, write } = await openWriter();
    // A deferred foreign key is checked at the commit: a real commit that SQLite refuses.
    db.exec(`CREATE TABLE parent (id INTEGER PRIMARY KEY);
      CREATE TABLE child (parent INTEGER REFERENCES parent (id) DEFERRABLE INITIALLY DEFERRED)`);
    db.pragma("foreign_keys = ON");
    write("a", "b");
    transaction.write(() => db.exec("INSERT INTO child VALUES (7)"), 1);
    transaction.commit();
    expect(losses).toEqual([{ kind: "lost", messages: 3, error: expect.stringContaining("FOREIGN KEY") }]);
    expect(db.inTransaction).toBe(false);
    expect(seen()).toEqual([]);
    write("c");
    transaction.commit();
    expect(seen()).toEqual(["c"]);
    expect(losses).toHaveLength(1);
  });
});
