/**
 * What the Node job queue does with a dead job: hands it on as a dead letter and goes on with
 * the next, keeps it first in its lane while the dead letter cannot be stored, and goes on when
 * the dead-letter hook fails, without running the dead job again.
 */
import { mkdtemp } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { createJobQueue } from "../../../src/node/queue/job-queue.js";
import { openSqliteBackend } from "../../../src/node/state/sqlite/sqlite-backend.js";
import { createLogSink } from "../../support/log-sink.js";
import { done, message, queueWith } from "./job-queue-harness.js";

describe("createJobQueue", () => {
  it("hands a dead job on as a dead letter and goes on with the next", async () => {
    const { queue, store } = queueWith((job) =>
      Promise.resolve(
        job.message.id === "bad"
          ? { kind: "dead", job, error: { code: "delivery_failed", message: "400", retryable: false, status: 400 } }
          : done(job),
      ),
    );
    await queue.enqueue(message("bad", "a"));
    await queue.enqueue(message("good", "a"));
    expect(await queue.drain(1_000)).toEqual([]);
    expect(store.deadLetters.map((letter) => letter.job.message.id)).toEqual(["bad"]);
    expect(queue.size).toBe(0);
  });

  it("keeps a job whose dead letter cannot be stored first in its lane, and buries it once storage answers", async () => {
    const { logger } = createLogSink();
    const state = openSqliteBackend(await mkdtemp(join(tmpdir(), "webhook-channel-queue-")), logger);
    const db = state.sqlite?.db;
    if (db === undefined) throw new Error("a SQLite backend has a database");
    // A real failure of the real store: SQLite refuses the dead letter's row until the trigger goes.
    db.exec("CREATE TRIGGER refuse BEFORE INSERT ON dead_letters BEGIN SELECT RAISE(ABORT, 'disk is full'); END");
    const runs: string[] = [];
    const queue = createJobQueue({
      capacity: 10,
      store: state.lanes,
      epoch: state.epoch,
      logger,
      run: (job) => {
        runs.push(job.message.id);
        if (job.message.id !== "bad") return Promise.resolve(done(job));
        if (runs.filter((id) => id === "bad").length === 2) db.exec("DROP TRIGGER refuse");
        return Promise.resolve({
          kind: "dead",
          job,
          error: { code: "delivery_failed", message: "400", retryable: false, status: 400 },
        });
      },
    });
    await queue.enqueue(message("bad", "a"));
    await queue.enqueue(message("next", "a"));
    expect(await queue.drain(10_000)).toEqual([]);
    // Tried again after the wait, until storing worked; the next job waited behind it and ran once.
    expect(runs).toEqual(["bad", "bad", "next"]);
    expect(queue.size).toBe(0);
    expect(queue.deadLetters).toBe(1);
    expect((db.prepare("SELECT id FROM dead_letters").all() as { id: string }[]).map((row) => row.id)).toEqual(["bad"]);
    await state.close();
  });

  it("goes on with the next job when the dead-letter hook fails, without running the dead one again", async () => {
    const { logger, lines } = createLogSink();
    const runs: string[] = [];
    const queue = createJobQueue({
      capacity: 10,
      logger,
      onDeadLetter: () => {
        throw new Error("database is locked");
      },
      run: (job) => {
        runs.push(job.message.id);
        return Promise.resolve(
          job.message.id === "bad"
            ? { kind: "dead", job, error: { code: "delivery_failed", message: "400", retryable: false, status: 400 } }
            : done(job),
        );
      },
    });
    await queue.enqueue(message("bad", "a"));
    await queue.enqueue(message("next", "a"));
    expect(await queue.drain(1_000)).toEqual([]);
    expect(runs).toEqual(["bad", "next"]);
    expect(queue.size).toBe(0);
    expect(
      lines.some((line) => String(line.msg).startsWith("cannot keep a dead letter within its channel's bound")),
    ).toBe(true);
    expect(lines.some((line) => line.msg === "dead letter: 400")).toBe(true);
  });
});
