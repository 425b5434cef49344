/**
 * Runs of the Node job queue that fail unexpectedly (the delivery thread stopped): retried from
 * the last step they reported, backing off between them, one at a time so that a poison message
 * takes no other job down, and dead-lettered after too many in a row, a run cut short by the
 * service's stop not counted.
 */
import { afterEach, describe, expect, it, vi } from "vitest";
import { MAX_UNEXPECTED_FAILURES } from "../../../src/core/lifecycle/crash-quarantine.js";
import type { Job, JobOutcome } from "../../../src/core/lifecycle/job.js";
import { createJobQueue } from "../../../src/node/queue/job-queue.js";
import { createLogSink } from "../../support/log-sink.js";
import { done, letterSink, message } from "./job-queue-harness.js";

afterEach(() => {
  vi.useRealTimers();
});

describe("createJobQueue", () => {
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
