/**
 * Another connection holding the state file's write lock for a moment: the CLI's offline
 * `dead-letters replay` or `delete` against a running service. The service's writes wait for it
 * (`busy_timeout`): they began with a read of the fence, and SQLite never waits to turn a read
 * into a write, so every accepted message of that moment was answered 503. A start that cannot
 * claim the file at all leaves no connection to it open.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { readdirSync, readlinkSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, expect, it } from "vitest";
import { newJob } from "../../../../src/core/lifecycle/job.js";
import { openSqliteBackend } from "../../../../src/node/state/sqlite/sqlite-backend.js";
import { STATE_FILE } from "../../../../src/node/state/sqlite/sqlite-state.js";
import type { StateBackend } from "../../../../src/node/state/state-backend.js";
import { createLogSink } from "../../../support/log-sink.js";

const cleanups: (() => Promise<void> | void)[] = [];

afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function stateDir(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), "webhook-channel-second-writer-"));
  cleanups.push(() => rm(dir, { recursive: true, force: true }));
  return dir;
}

/** Another process takes the file's write lock, for `ms` (or until the test ends); resolves once held. */
function holdWriteLock(path: string, ms?: number): Promise<void> {
  const script = `
    const Database = require(${JSON.stringify(join(process.cwd(), "node_modules/better-sqlite3"))});
    const db = new Database(${JSON.stringify(path)});
    db.exec("BEGIN IMMEDIATE");
    db.exec("INSERT INTO meta (name, value) VALUES ('cli', 1) ON CONFLICT (name) DO UPDATE SET value = value + 1");
    process.stdout.write("locked\\n");
    ${ms === undefined ? "setInterval(() => {}, 1000);" : `setTimeout(() => { db.exec("COMMIT"); db.close(); }, ${ms});`}`;
  const child: ChildProcess = spawn(process.execPath, ["-e", script], { stdio: ["ignore", "pipe", "inherit"] });
  cleanups.push(() => void child.kill());
  return new Promise((resolve) => {
    child.stdout?.on("data", (chunk: Buffer) => {
      if (String(chunk).includes("locked")) resolve();
    });
  });
}

/** This process's descriptors open on `path` (and its `-wal` and `-shm`), from Linux's /proc. */
function openOn(path: string): number {
  return readdirSync("/proc/self/fd").filter((fd) => {
    try {
      return readlinkSync(`/proc/self/fd/${fd}`).startsWith(path);
    } catch {
      return false;
    }
  }).length;
}

it("commits an accepted message once another connection's short write lock is let go, with no error", async () => {
  const dir = await stateDir();
  const { logger, lines } = createLogSink("info");
  const state: StateBackend = openSqliteBackend(dir, logger);
  cleanups.push(() => state.close());
  await holdWriteLock(join(dir, STATE_FILE), 300);
  const job = newJob({
    id: "m1",
    channel: "webhook",
    receivedAt: Date.now(),
    message: { senderId: "a", conversationId: "c1", text: "hello" },
  });
  await expect(state.lanes.add(job)).resolves.toBeUndefined();
  expect(lines.filter((line) => line.level !== "info").map((line) => line.msg)).toEqual([]);
});

it("fails a start that cannot claim the file, leaving no connection to it open", async () => {
  const dir = await stateDir();
  const { logger } = createLogSink("info");
  await openSqliteBackend(dir, logger).close();
  const path = join(dir, STATE_FILE);
  await holdWriteLock(path);
  const before = openOn(path);
  expect(() => openSqliteBackend(dir, logger)).toThrow(/locked|busy/i);
  expect(openOn(path) - before).toBe(0);
}, 15_000);
