import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { isLaneFenced } from "../../../../src/core/lifecycle/lane-store.js";
import { openSqliteBackend } from "../../../../src/node/state/sqlite/sqlite-backend.js";
import { claimSqliteEpoch } from "../../../../src/node/state/sqlite/sqlite-epoch.js";
import { pruneIdempotencyKeys } from "../../../../src/node/state/sqlite/sqlite-idempotency-store.js";
import type { StateDb } from "../../../../src/node/state/sqlite/sqlite-state.js";
import { createLogSink } from "../../../support/log-sink.js";

const NOW = 1_800_000_000_000;
const dirs: string[] = [];
afterEach(async () => {
  await Promise.all(dirs.splice(0).map((dir) => rm(dir, { recursive: true, force: true })));
});

/** A SQLite backend on a state_dir of its own. */
async function freshBackend() {
  const dir = await mkdtemp(join(tmpdir(), "webhook-channel-keys-"));
  dirs.push(dir);
  return openSqliteBackend(dir, createLogSink().logger);
}

/** `count` keys expired at `NOW` and `live` keys that expire later. */
function keysIn(db: StateDb, count: number, live: number): void {
  const insert = db.prepare(
    "INSERT INTO idempotency (channel, key, message_id, conversation_id, expires_at) VALUES ('webhook', ?, ?, 'c', ?)",
  );
  db.transaction(() => {
    for (let n = 0; n < count; n += 1) insert.run(`old-${n}`, `m-${n}`, NOW - n);
    for (let n = 0; n < live; n += 1) insert.run(`live-${n}`, `l-${n}`, NOW + 1 + n);
  })();
}

describe("the SQLite idempotency keys' prune", () => {
  it("deletes every expired key in slices, through the expiry index, and keeps the live ones", async () => {
    const backend = await freshBackend();
    try {
      const db = backend.sqlite?.db;
      if (db === undefined) throw new Error("no state file");
      keysIn(db, 2_500, 3);
      const plan = db
        .prepare(
          "EXPLAIN QUERY PLAN DELETE FROM idempotency WHERE rowid IN (SELECT rowid FROM idempotency WHERE expires_at <= ? ORDER BY expires_at LIMIT ?)",
        )
        .all(NOW, 10) as { detail: string }[];
      expect(plan.map((row) => row.detail).join(" ")).toContain("idempotency_expires");
      expect(await pruneIdempotencyKeys(db, NOW, () => undefined, 1_000)).toBe(2_500);
      expect(db.prepare("SELECT key FROM idempotency ORDER BY key").pluck().all()).toEqual([
        "live-0",
        "live-1",
        "live-2",
      ]);
      expect(await backend.pruneExpired(NOW + 10)).toBe(3);
    } finally {
      await backend.close();
    }
  });

  it("deletes nothing in a file another process has claimed since", async () => {
    const first = await freshBackend();
    try {
      const db = first.sqlite?.db;
      if (db === undefined) throw new Error("no state file");
      keysIn(db, 5, 0);
      claimSqliteEpoch(db);
      let refusal: unknown;
      await first.pruneExpired(NOW).catch((error: unknown) => {
        refusal = error;
      });
      expect(isLaneFenced(refusal), `expected lane_fenced, got ${String(refusal)}`).toBe(true);
      expect(db.prepare("SELECT count(*) FROM idempotency").pluck().get()).toBe(5);
    } finally {
      await first.close();
    }
  });
});
