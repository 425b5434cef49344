/**
 * Replayed dead letters in `state_dir`: a replay taken joins the end of its lane in the file too,
 * so a restart resumes it behind what was accepted before it was taken; and a process that lost
 * the file to another one takes no replay (which would leave it stored, run by nobody), and says
 * so in its readiness.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { type Job, newJob } from "../../../../src/core/lifecycle/job.js";
import { openSqliteBackend } from "../../../../src/node/state/sqlite/sqlite-backend.js";
import type { StateBackend } from "../../../../src/node/state/state-backend.js";
import { createLogSink } from "../../../support/log-sink.js";
import { deadThenReplayed } from "../../../support/sqlite-lanes.js";

const dirs: string[] = [];
const backends: StateBackend[] = [];

afterEach(async () => {
  for (const backend of backends.splice(0)) await backend.close();
  for (const dir of dirs.splice(0)) await rm(dir, { recursive: true, force: true });
});

async function open(dir?: string): Promise<{ dir: string; state: StateBackend }> {
  const at = dir ?? (await mkdtemp(join(tmpdir(), "webhook-channel-replays-")));
  if (dir === undefined) dirs.push(at);
  const state = openSqliteBackend(at, createLogSink().logger);
  backends.push(state);
  return { dir: at, state };
}

const job = (id: string): Job =>
  newJob({
    id,
    channel: "webhook",
    receivedAt: 1_000,
    message: { senderId: "x", conversationId: "x", text: id },
  });

const pendingIds = (state: StateBackend): string[] =>
  (state.sqlite?.lanes.readPending(0, 100) ?? []).map((row) => row.job.message.id);

describe("replayed dead letters in state_dir", () => {
  it("resume, after a restart, behind what was accepted before the replay was taken", async () => {
    const { dir, state } = await open();
    await deadThenReplayed(state, job("x0-dead"));
    await state.lanes.add(job("x1-accepted-meanwhile"));
    expect((await state.lanes.takeReplayed(() => 10)).map((taken) => taken.message.id)).toEqual(["x0-dead"]);
    // In memory the replay joined its lane behind x1; the file keeps that order for a restart.
    await state.close();
    backends.splice(backends.indexOf(state), 1);
    const { state: restarted } = await open(dir);
    expect(pendingIds(restarted)).toEqual(["x1-accepted-meanwhile", "x0-dead"]);
  });

  it("are not taken by a process that lost the file, which says so in its readiness", async () => {
    const { dir, state: older } = await open();
    await deadThenReplayed(older, job("y0-dead"));
    expect(older.writeProblem()).toBeUndefined();
    const { state: newer } = await open(dir);
    expect(() => older.lanes.takeReplayed(() => 10)).toThrow(expect.objectContaining({ code: "lane_fenced" }));
    expect(older.writeProblem()).toMatch(/another webhook-channel process opened the same state_dir/);
    expect((await newer.lanes.takeReplayed(() => 10)).map((taken) => taken.message.id)).toEqual(["y0-dead"]);
    expect(newer.writeProblem()).toBeUndefined();
  });
});
