/**
 * The Node job queue's lanes: its capacity, one job at a time and in order per conversation,
 * how many jobs run at once, what a drain waits for and reports, and a job given again (replicas
 * loading a conversation). Dead letters are in job-queue-dead-letters.test.ts, runs that fail
 * unexpectedly in job-queue-unexpected-failures.test.ts.
 */
import { mkdtemp } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it, vi } from "vitest";
import type { Job } from "../../../src/core/lifecycle/job.js";
import { createJobQueue } from "../../../src/node/queue/job-queue.js";
import { openSqliteBackend } from "../../../src/node/state/sqlite/sqlite-backend.js";
import { createLogSink } from "../../support/log-sink.js";
import { waitFor } from "../../support/wait-for.js";
import { done, gate, message, queueWith } from "./job-queue-harness.js";

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
    // b1 runs while a1 waits its 60 ms to retry; a2 stays behind a1.
    await waitFor(() => (order.includes("b1") ? true : undefined), 1_000, "b1 to run");
    expect(order).toEqual(["b1"]);
    expect(await queue.drain(1_000)).toEqual([]);
    expect(order).toEqual(["b1", "a1", "a2"]);
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
