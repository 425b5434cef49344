/**
 * The group commit of `state_dir` (one transaction per event-loop turn for the stores of a
 * connection): what a failed group does, how long a finished job's delete may wait, and that
 * a stop commits what waits.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterEach, describe, expect, it, vi } from "vitest";
import { conversationKey } from "../../../../src/core/conversation/conversation-store.js";
import { type Job, newJob } from "../../../../src/core/lifecycle/job.js";
import { openSqliteBackend } from "../../../../src/node/state/sqlite/sqlite-backend.js";
import { LATER_WRITES_MAX_WAIT_MS } from "../../../../src/node/state/sqlite/sqlite-group-commit.js";
import { STATE_FILE } from "../../../../src/node/state/sqlite/sqlite-state.js";
import type { StateBackend } from "../../../../src/node/state/state-backend.js";
import { createLogSink } from "../../../support/log-sink.js";
import { ticketOf } from "../../../support/sqlite-lanes.js";

const dirs: string[] = [];
const backends: StateBackend[] = [];
const others: Database.Database[] = [];

afterEach(async () => {
  vi.useRealTimers();
  for (const other of others.splice(0)) other.close();
  for (const backend of backends.splice(0)) backend.close();
  for (const dir of dirs.splice(0)) await rm(dir, { recursive: true, force: true });
});

async function open(): Promise<{ dir: string; state: StateBackend; lines: Record<string, unknown>[] }> {
  const dir = await mkdtemp(join(tmpdir(), "webhook-channel-group-"));
  dirs.push(dir);
  const { logger, lines } = createLogSink("info");
  const state = openSqliteBackend(dir, logger);
  backends.push(state);
  return { dir, state, lines };
}

/** A second connection to the same file, as the CLI or the delivery thread would have. */
function other(dir: string): Database.Database {
  const db = new Database(join(dir, STATE_FILE));
  others.push(db);
  return db;
}

const storedIds = (db: Database.Database): string[] =>
  (db.prepare("SELECT id FROM jobs ORDER BY seq").all() as { id: string }[]).map((row) => row.id);

let count = 0;
function job(conversationId = "c1"): Job {
  count += 1;
  return newJob({
    id: `m${count}`,
    channel: "webhook",
    receivedAt: 1_000,
    message: { senderId: "a", conversationId, text: "hello" },
  });
}

const turn = () => new Promise<void>((resolve) => setImmediate(resolve));

describe("the group commit of state_dir", () => {
  it("fails every add and update of a group that cannot commit, and deletes its finished jobs with the next group", async () => {
    const { dir, state, lines } = await open();
    const db = state.sqlite?.db;
    if (db === undefined) throw new Error("no database");
    const done = job();
    const running = job();
    await Promise.all([state.lanes.add(done), state.lanes.add(running)]);

    // Another connection holds the write lock, and this one does not wait for it.
    db.pragma("busy_timeout = 0");
    const locker = other(dir);
    locker.exec("BEGIN IMMEDIATE");
    // A finished job's delete waits for the next group, which this add and update start now.
    const removed = state.lanes.finish(ticketOf(state, done), done);
    const added = state.lanes.add(job());
    const updated = state.lanes.save(ticketOf(state, running), { ...running, attempts: 1 });
    await expect(added).rejects.toThrow(/locked|busy/i);
    await expect(updated).rejects.toThrow(/locked|busy/i);
    await expect(removed).rejects.toThrow(/locked|busy/i);
    expect(lines.map((line) => line.msg)).toEqual(
      expect.arrayContaining([
        "cannot commit accepted messages to state_dir",
        "cannot remove finished messages from state_dir",
      ]),
    );
    locker.exec("ROLLBACK");

    // Nothing is lost: the finished job stays stored until its delete commits, which rides on the
    // next group rather than leave the job to be delivered again after a restart.
    expect(storedIds(locker)).toEqual([done.message.id, running.message.id]);
    const next = job();
    await state.lanes.add(next);
    expect(storedIds(locker)).toEqual([running.message.id, next.message.id]);
  });

  it("lets a finished job's delete ride on the next commit, or commit on its own within a second", async () => {
    vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout"] });
    const { dir, state } = await open();
    const reader = other(dir);
    const [first, second, third] = [job(), job(), job()];
    await Promise.all([state.lanes.add(first), state.lanes.add(second)]);

    const firstRemoved = state.lanes.finish(ticketOf(state, first), first);
    await turn();
    // Waiting: still in the file.
    expect(storedIds(reader)).toEqual([first.message.id, second.message.id]);
    await state.lanes.add(third);
    expect(storedIds(reader)).toEqual([second.message.id, third.message.id]);

    const secondRemoved = state.lanes.finish(ticketOf(state, second), second);
    await turn();
    expect(storedIds(reader)).toEqual([second.message.id, third.message.id]);
    await vi.advanceTimersByTimeAsync(LATER_WRITES_MAX_WAIT_MS);
    expect(storedIds(reader)).toEqual([third.message.id]);
    // Each finish resolved once its delete committed.
    await Promise.all([firstRemoved, secondRemoved]);
  });

  it("commits what waits when the backend closes", async () => {
    const { dir, state } = await open();
    const finished = job();
    await state.lanes.add(finished);
    const removed = state.lanes.finish(ticketOf(state, finished), finished);
    await state.close();
    await removed;
    backends.splice(backends.indexOf(state), 1);
    expect(storedIds(other(dir))).toEqual([]);
  });

  it("stores a job's replies with their conversation's highest sequence number, which never goes down", async () => {
    const { dir, state } = await open();
    const reader = other(dir);
    const last = () =>
      (
        reader.prepare("SELECT last FROM sequences WHERE conversation = ?").get(conversationKey("webhook", "c9")) as
          | { last: number }
          | undefined
      )?.last;
    const later = job("c9");
    const older = job("c9");
    await Promise.all([state.lanes.add(later), state.lanes.add(older)]);
    expect(last()).toBeUndefined();
    const reply = (sequence: number) => ({ id: `r${sequence}`, sequence, body: "{}" });
    await state.lanes.save(ticketOf(state, later), { ...later, replies: [reply(7), reply(8)] });
    expect(last()).toBe(8);
    await state.lanes.save(ticketOf(state, older), { ...older, replies: [reply(5)] });
    expect(last()).toBe(8);
    expect(await state.lanes.lastSequence(ticketOf(state, later))).toBe(8);
  });

  it("commits a conversation's turns in the group of their replies, and reads them once committed", async () => {
    const { state } = await open();
    const key = conversationKey("webhook", "c1");
    const pending = job();
    await state.lanes.add(pending);
    const replies = [{ id: "r1", sequence: 1, body: "{}" }];
    const at = Date.now();
    await state.lanes.save(
      ticketOf(state, pending),
      { ...pending, replies },
      {
        turns: [{ role: "user", text: "hello", at }],
      },
    );
    expect(await state.conversations.history(key, 10)).toEqual([{ role: "user", text: "hello", at }]);
  });

  it("refuses every write once another process claimed the file: accepted messages 503, runs fenced", async () => {
    const { dir, state } = await open();
    const pending = job();
    await state.lanes.add(pending);
    // A second service process opens the same state_dir (a restart while this one was frozen).
    const second = openSqliteBackend(dir, createLogSink().logger);
    backends.push(second);
    await expect(state.lanes.add(job())).rejects.toMatchObject({ code: "state_unavailable" });
    await expect(state.lanes.save(ticketOf(state, pending), { ...pending, attempts: 1 })).rejects.toMatchObject({
      code: "lane_fenced",
    });
    expect(() =>
      state.lanes.bury(ticketOf(state, pending), {
        job: pending,
        error: { code: "brain_failed", message: "x", retryable: false },
        attempts: 1,
        diedAt: 1,
      }),
    ).toThrow(/another webhook-channel process/);
    await second.lanes.add(job());
  });
});
