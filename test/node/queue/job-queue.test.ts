import { mkdtemp } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it, vi } from "vitest";
import type { DeadLetter } from "../../../src/core/dead-letters/dead-letter.js";
import { MAX_UNEXPECTED_FAILURES } from "../../../src/core/lifecycle/crash-quarantine.js";
import type { Job, JobOutcome } from "../../../src/core/lifecycle/job.js";
import type { QueuedMessage } from "../../../src/core/message/inbound-message.js";
import { createJobQueue } from "../../../src/node/queue/job-queue.js";
import { openSqliteBackend } from "../../../src/node/state/sqlite/sqlite-backend.js";
import { createLogSink } from "../../support/log-sink.js";

const message = (id: string, conversationId: string): QueuedMessage => ({
  id,
  channel: "webhook",
  receivedAt: 0,
  message: { senderId: "s", conversationId, text: id },
});

function gate(): { promise: Promise<void>; open: () => void } {
  let open: () => void = () => undefined;
  const promise = new Promise<void>((resolve) => {
    open = resolve;
  });
  return { promise, open };
}

const done = (job: Job): JobOutcome => ({ kind: "done", job });

/** The dead letters a queue hands on (its `onDeadLetter`), in order. */
function letterSink(): { deadLetters: DeadLetter[]; onDeadLetter: (letter: DeadLetter) => void } {
  const deadLetters: DeadLetter[] = [];
  return { deadLetters, onDeadLetter: (letter) => deadLetters.push(letter) };
}

function queueWith(run: (job: Job) => Promise<JobOutcome>, capacity = 100, concurrency?: number) {
  const { logger } = createLogSink();
  const store = letterSink();
  const queue = createJobQueue({
    capacity,
    ...(concurrency === undefined ? {} : { concurrency }),
    run: (job) => run(job),
    onDeadLetter: store.onDeadLetter,
    logger,
  });
  return { queue, store };
}

afterEach(() => {
  vi.useRealTimers();
});

describe("createJobQueue", () => {
  it("refuses with buffer_full once capacity messages are unfinished", async () => {
    const wait = gate();
    const { queue } = queueWith(async (job) => {
      await wait.promise;
      return done(job);
    }, 2);
    await queue.enqueue(message("1", "a"));
    await queue.enqueue(message("2", "b"));
    expect(() => queue.enqueue(message("3", "c"))).toThrow(
      expect.objectContaining({ code: "buffer_full", status: 503, retryable: true }),
    );
    wait.open();
    expect(await queue.drain(1_000)).toEqual([]);
  });

  it("runs one conversation in order, one job at a time", async () => {
    const seen: string[] = [];
    let running = 0;
    let most = 0;
    const { queue } = queueWith(async (job) => {
      running += 1;
      most = Math.max(most, running);
      await new Promise((resolve) => setTimeout(resolve, Math.random() * 3));
      seen.push(job.message.id);
      running -= 1;
      return done(job);
    });
    for (let index = 0; index < 20; index += 1) await queue.enqueue(message(String(index), "same"));
    expect(await queue.drain(5_000)).toEqual([]);
    expect(seen).toEqual(Array.from({ length: 20 }, (_, index) => String(index)));
    expect(most).toBe(1);
  });

  it("holds a conversation's later jobs while one waits to retry, and not other conversations", async () => {
    const order: string[] = [];
    let failedOnce = false;
    const { queue } = queueWith((job) => {
      if (job.message.id === "a1" && !failedOnce) {
        failedOnce = true;
        return Promise.resolve({ kind: "retry", job: { ...job, attempts: 1 }, delayMs: 60 });
      }
      order.push(job.message.id);
      return Promise.resolve(done(job));
    });
    await queue.enqueue(message("a1", "a"));
    await queue.enqueue(message("a2", "a"));
    await queue.enqueue(message("b1", "b"));
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(order).toEqual(["b1"]);
    expect(await queue.drain(1_000)).toEqual([]);
    expect(order).toEqual(["b1", "a1", "a2"]);
  });

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
    expect(lines.some((line) => String(line.msg).startsWith("cannot keep a dead letter for the admin API"))).toBe(true);
    expect(lines.some((line) => line.msg === "dead letter: 400")).toBe(true);
  });

  it("waits, when draining, for a message accepted while its commit is still pending", async () => {
    const { logger } = createLogSink();
    const state = openSqliteBackend(await mkdtemp(join(tmpdir(), "webhook-channel-queue-")), logger);
    const runs: string[] = [];
    const queue = createJobQueue({
      capacity: 10,
      store: state.lanes,
      epoch: state.epoch,
      logger,
      run: (job) => {
        runs.push(job.message.id);
        return Promise.resolve(done(job));
      },
    });
    // Not awaited: the SQLite store commits the accepted messages of this turn together, later.
    const accepted = queue.enqueue(message("last", "a"));
    expect(queue.size).toBe(1);
    expect(await queue.drain(5_000)).toEqual([]);
    await accepted;
    expect(runs).toEqual(["last"]);
    await state.close();
  });

  it("limits how many jobs run at once", async () => {
    const wait = gate();
    let running = 0;
    let most = 0;
    const { queue } = queueWith(
      async (job) => {
        running += 1;
        most = Math.max(most, running);
        await wait.promise;
        running -= 1;
        return done(job);
      },
      100,
      3,
    );
    for (let index = 0; index < 10; index += 1) await queue.enqueue(message(String(index), String(index)));
    expect(running).toBe(3);
    wait.open();
    await queue.drain(1_000);
    expect(most).toBe(3);
  });

  it("reports unfinished ids when the drain times out", async () => {
    const { queue } = queueWith((job) => Promise.resolve({ kind: "retry", job, delayMs: 60_000 }));
    await queue.enqueue(message("stuck", "a"));
    await queue.enqueue(message("behind", "a"));
    expect(await queue.drain(50)).toEqual(["stuck", "behind"]);
  });

  it("retries a run that rejects from the last step it reported", async () => {
    vi.useFakeTimers();
    const { logger, lines } = createLogSink();
    const seen: Job[] = [];
    const queue = createJobQueue({
      capacity: 10,
      logger,
      run: (job, hooks) => {
        seen.push(job);
        if (seen.length > 1) return Promise.resolve(done(job));
        // The delivery thread stopped after the brain had answered.
        void hooks.save({ ...job, replies: [{ id: "r-1", sequence: 1, body: "{}" }] }, { turns: [] });
        return Promise.reject(new Error("the delivery thread stopped"));
      },
    });
    await queue.enqueue(message("m-1", "a"));
    await vi.advanceTimersByTimeAsync(1_000);
    expect(await queue.drain(0)).toEqual([]);
    expect(seen).toHaveLength(2);
    expect(seen[1]?.replies).toEqual([{ id: "r-1", sequence: 1, body: "{}" }]);
    expect(lines.some((line) => String(line.msg).startsWith("job failed unexpectedly"))).toBe(true);
  });

  it("dead-letters a job whose runs keep failing unexpectedly, backing off between them", async () => {
    vi.useFakeTimers();
    const { logger } = createLogSink("error");
    const store = letterSink();
    const startedAt: number[] = [];
    const queue = createJobQueue({
      capacity: 10,
      onDeadLetter: store.onDeadLetter,
      logger,
      run: () => {
        startedAt.push(Date.now());
        return Promise.reject(new Error("the delivery thread stopped (exit code 1)"));
      },
    });
    const t0 = Date.now();
    await queue.enqueue(message("poison", "a"));
    await vi.advanceTimersByTimeAsync(60_000);
    expect(store.deadLetters.map((letter) => letter.job.message.id)).toEqual(["poison"]);
    const letter = store.deadLetters[0];
    expect(letter?.error.code).toBe("internal_error");
    expect(letter?.error.message).toContain(`failed unexpectedly ${MAX_UNEXPECTED_FAILURES} times in a row`);
    expect(startedAt.map((at) => at - t0)).toEqual([0, 1_000, 3_000, 7_000, 15_000]);
    expect(queue.size).toBe(0);
  });

  it("runs jobs that failed unexpectedly one at a time, so a poison message takes no other job down", async () => {
    vi.useFakeTimers();
    const { logger } = createLogSink("error");
    const store = letterSink();
    // A stand-in for the delivery thread: the poison message crashes it, and every run it
    // holds at that moment rejects; any other message is done after 10 ms.
    const inFlight = new Set<(error: Error) => void>();
    const done: string[] = [];
    const queue = createJobQueue({
      capacity: 10,
      onDeadLetter: store.onDeadLetter,
      logger,
      run: (job) =>
        new Promise<JobOutcome>((resolve, reject) => {
          inFlight.add(reject);
          if (job.message.id === "poison") {
            setTimeout(() => {
              for (const crash of inFlight) crash(new Error("the delivery thread stopped (exit code 1)"));
              inFlight.clear();
            }, 5);
            return;
          }
          setTimeout(() => {
            // A run the crash took down is over; this one was not.
            if (!inFlight.delete(reject)) return;
            done.push(job.message.id);
            resolve({ kind: "done", job });
          }, 10);
        }),
    });
    await queue.enqueue(message("innocent-1", "a"));
    await queue.enqueue(message("poison", "b"));
    await queue.enqueue(message("innocent-2", "c"));
    await vi.advanceTimersByTimeAsync(60_000);
    expect(done.sort()).toEqual(["innocent-1", "innocent-2"]);
    expect(store.deadLetters.map((letter) => letter.job.message.id)).toEqual(["poison"]);
    expect(queue.size).toBe(0);
  });

  it("counts only unexpected failures in a row: an ordinary outcome starts the count again", async () => {
    vi.useFakeTimers();
    const { logger } = createLogSink("error");
    const store = letterSink();
    const script = ["crash", "crash", "crash", "crash", "retry", "crash", "crash", "crash", "crash", "done"];
    let step = 0;
    const queue = createJobQueue({
      capacity: 10,
      onDeadLetter: store.onDeadLetter,
      logger,
      run: (job) => {
        const next = script[step] ?? "done";
        step += 1;
        if (next === "crash") return Promise.reject(new Error("the delivery thread stopped"));
        return Promise.resolve(next === "retry" ? { kind: "retry", job, delayMs: 10 } : done(job));
      },
    });
    await queue.enqueue(message("m-1", "a"));
    await vi.advanceTimersByTimeAsync(120_000);
    expect(step).toBe(script.length);
    expect(store.deadLetters).toEqual([]);
    expect(queue.size).toBe(0);
  });

  it("does not count a run that the stop of the service cut short", async () => {
    vi.useFakeTimers();
    const { logger } = createLogSink("error");
    const store = letterSink();
    let runs = 0;
    let cut: (error: Error) => void = () => undefined;
    const queue = createJobQueue({
      capacity: 10,
      onDeadLetter: store.onDeadLetter,
      logger,
      run: () => {
        runs += 1;
        if (runs < MAX_UNEXPECTED_FAILURES) return Promise.reject(new Error("the delivery thread stopped"));
        return new Promise<JobOutcome>((_, reject) => {
          cut = reject;
        });
      },
    });
    await queue.enqueue(message("m-1", "a"));
    await vi.advanceTimersByTimeAsync(60_000);
    expect(runs).toBe(MAX_UNEXPECTED_FAILURES);
    const left = queue.drain(0);
    await vi.advanceTimersByTimeAsync(0);
    expect(await left).toEqual(["m-1"]);
    cut(new Error("the delivery thread stopped (exit code 1)"));
    await vi.advanceTimersByTimeAsync(1_000);
    expect(store.deadLetters).toEqual([]);
  });
});

describe("createJobQueue given the same job again (replicas loading a conversation)", () => {
  it("skips a job it holds and one that just finished here, and runs the others once", async () => {
    const ran: string[] = [];
    const wait = gate();
    const { queue } = queueWith(async (job) => {
      ran.push(job.message.id);
      if (job.message.id === "2") await wait.promise;
      return done(job);
    });
    const job = (id: string): Job => ({ message: message(id, "a"), delivered: 0, attempts: 0 });
    queue.restore([job("1")]);
    await vi.waitFor(() => expect(ran).toEqual(["1"]));
    await vi.waitFor(() => expect(queue.size).toBe(0));
    // "1" finished (its delete may not have committed), "2" is held while it runs.
    queue.restore([job("1"), job("2")]);
    await vi.waitFor(() => expect(ran).toEqual(["1", "2"]));
    queue.restore([job("1"), job("2"), job("3")]);
    expect(queue.size).toBe(2);
    expect(queue.knows("1")).toBe(true);
    expect(queue.knows("4")).toBe(false);
    wait.open();
    await vi.waitFor(() => expect(ran).toEqual(["1", "2", "3"]));
    await vi.waitFor(() => expect(queue.size).toBe(0));
  });
});
