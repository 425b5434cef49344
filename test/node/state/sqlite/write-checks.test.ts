/**
 * The committed write check `/readyz` asks for after a failed write: it confirms only for the
 * process that holds the state file, never waits for another writer's lock, and leaves nothing
 * behind in the jobs table.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterEach, describe, expect, it } from "vitest";
import { silentLogger } from "../../../../src/core/log/logger.js";
import { openSqliteBackend } from "../../../../src/node/state/sqlite/sqlite-backend.js";
import { STATE_FILE } from "../../../../src/node/state/sqlite/sqlite-state.js";
import type { StateBackend } from "../../../../src/node/state/state-backend.js";

const dirs: string[] = [];
const backends: StateBackend[] = [];
const others: Database.Database[] = [];

afterEach(async () => {
  for (const other of others.splice(0)) other.close();
  for (const backend of backends.splice(0)) await backend.close();
  for (const dir of dirs.splice(0)) await rm(dir, { recursive: true, force: true });
});

async function open(dir?: string): Promise<{ dir: string; state: StateBackend }> {
  const where = dir ?? (await mkdtemp(join(tmpdir(), "webhook-channel-checks-")));
  if (dir === undefined) dirs.push(where);
  const state = openSqliteBackend(where, silentLogger);
  backends.push(state);
  return { dir: where, state };
}

describe("the state file's committed write check", () => {
  it("confirms at the time it began and leaves no row behind", async () => {
    const { dir, state } = await open();
    const before = performance.now();
    const at = state.writesConfirmedAt();
    expect(at).toBeGreaterThanOrEqual(before);
    const reader = new Database(join(dir, STATE_FILE), { readonly: true });
    others.push(reader);
    expect(reader.prepare("SELECT count(*) AS n FROM jobs").get()).toEqual({ n: 0 });
  });

  it("confirms nothing for a process another one took the file from", async () => {
    const { dir, state } = await open();
    const { state: second } = await open(dir);
    expect(state.writesConfirmedAt()).toBeUndefined();
    expect(second.writesConfirmedAt()).toBeDefined();
  });

  it("confirms nothing, at once, while another connection holds the write lock", async () => {
    const { dir, state } = await open();
    const other = new Database(join(dir, STATE_FILE));
    others.push(other);
    other.exec("BEGIN IMMEDIATE");
    const started = performance.now();
    expect(state.writesConfirmedAt()).toBeUndefined();
    // No wait for the lock: a probe must not block the event loop (the busy timeout is seconds).
    expect(performance.now() - started).toBeLessThan(1_000);
    other.exec("ROLLBACK");
    expect(state.writesConfirmedAt()).toBeDefined();
  });
});
