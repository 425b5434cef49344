/**
 * The conversation memory's retention on Postgres: the history by the store's clock, and the
 * prune that deletes what the retention no longer keeps, in batches, from several replicas at once.
 */
import type pg from "pg";
import { beforeEach, describe, expect, it } from "vitest";
import { systemClock } from "../../../../src/core/clock.js";
import { retentionCutoff } from "../../../../src/core/conversation/memory-retention.js";
import { openPostgresBackend } from "../../../../src/node/state/postgres/postgres-backend.js";
import { createPostgresConversationStore } from "../../../../src/node/state/postgres/postgres-conversation-store.js";
import { prunePostgresTurns } from "../../../../src/node/state/postgres/postgres-turn-prune.js";
import { createLogSink } from "../../../support/log-sink.js";
import { migratedDatabase } from "./fresh-postgres.js";

const HOUR = 3_600_000;
const NOW = 10_000 * HOUR;

let url: string;
let pool: pg.Pool;

beforeEach(async () => {
  ({ url, pool } = await migratedDatabase());
});

/** Stores turns as the conversation store does: `[conversation, text, at]` each. */
async function insert(rows: readonly (readonly [string, string, number])[]): Promise<void> {
  await pool.query(
    `INSERT INTO webhook_channel.turns (conversation, turn, at)
     SELECT c, json_build_object('role', 'user', 'text', t, 'at', a)::text, a FROM unnest($1::text[], $2::text[], $3::bigint[]) AS r(c, t, a)`,
    [rows.map((row) => row[0]), rows.map((row) => row[1]), rows.map((row) => row[2])],
  );
}

async function storedTexts(): Promise<string[]> {
  const rows = await pool.query<{ turn: string }>("SELECT turn FROM webhook_channel.turns ORDER BY seq");
  return rows.rows.map((row) => (JSON.parse(row.turn) as { text: string }).text);
}

describe("the Postgres conversation memory's retention", () => {
  it("leaves turns older than the retention out of the history, by the store's clock", async () => {
    let now = NOW;
    const store = createPostgresConversationStore(pool, 100, undefined, { hours: 2, now: () => now });
    await store.append("c", [
      { role: "user", text: "first", at: NOW - HOUR },
      { role: "assistant", text: "second", at: NOW },
    ]);
    expect((await store.history("c", 10)).map((turn) => turn.text)).toEqual(["first", "second"]);
    now += HOUR + 1;
    expect((await store.history("c", 10)).map((turn) => turn.text)).toEqual(["second"]);
    expect((await store.history("c", 1)).map((turn) => turn.text)).toEqual(["second"]);
    now += HOUR;
    expect(await store.history("c", 10)).toEqual([]);
  });

  it("prunes every turn older than the cutoff, of every conversation, and keeps the rest", async () => {
    const cutoff = retentionCutoff(NOW, 24);
    await insert([
      ["a", "a old", cutoff - 2],
      ["b", "b old", cutoff - 1],
      ["a", "a at the cutoff", cutoff],
      ["b", "b new", NOW],
    ]);
    expect(await prunePostgresTurns(pool, cutoff)).toBe(2);
    expect(await storedTexts()).toEqual(["a at the cutoff", "b new"]);
    expect(await prunePostgresTurns(pool, cutoff)).toBe(0);
  });

  it("prunes in batches until none is left", async () => {
    await insert(Array.from({ length: 7 }, (_, index) => [`c${index}`, `old ${index}`, NOW - HOUR - index] as const));
    await insert([["c0", "new", NOW]]);
    const statements: string[] = [];
    const counted = new Proxy(pool, {
      get(target, property, receiver) {
        if (property !== "query") return Reflect.get(target, property, receiver);
        return (text: string, values: unknown[]) => {
          statements.push(text);
          return target.query(text, values);
        };
      },
    });
    expect(await prunePostgresTurns(counted, NOW - HOUR + 1, 3)).toBe(7);
    expect(statements).toHaveLength(3);
    expect(await storedTexts()).toEqual(["new"]);
  });

  it("is safe when several replicas prune at once: each old turn goes once, none fails, the rest stays", async () => {
    const old = Array.from({ length: 300 }, (_, index) => [`c${index % 17}`, `old ${index}`, NOW - HOUR] as const);
    await insert(old);
    await insert([["c1", "new", NOW]]);
    const deleted = await Promise.all([1, 2, 3, 4].map(() => prunePostgresTurns(pool, NOW - 1, 10)));
    expect(deleted.reduce((sum, count) => sum + count, 0)).toBe(300);
    expect(await storedTexts()).toEqual(["new"]);
  });

  it("is what the Postgres backend's pruneConversations runs, and its history keeps by its retention", async () => {
    const backend = await openPostgresBackend(url, createLogSink().logger, systemClock, undefined, 1);
    try {
      const now = Date.now();
      await backend.conversations.append("c", [
        { role: "user", text: "old", at: now - 2 * HOUR },
        { role: "assistant", text: "new", at: now },
      ]);
      expect((await backend.conversations.history("c", 10)).map((turn) => turn.text)).toEqual(["new"]);
      expect(await backend.pruneConversations(retentionCutoff(now, 1))).toBe(1);
      expect(await storedTexts()).toEqual(["new"]);
    } finally {
      await backend.close();
    }
  });
});
