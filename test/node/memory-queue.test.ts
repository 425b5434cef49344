import { describe, expect, it } from "vitest";
import type { QueuedMessage } from "../../src/core/message/inbound-message.js";
import { createMemoryQueue } from "../../src/node/memory-queue.js";

const message = (id: string, conversationId: string): QueuedMessage => ({
  id,
  channel: "webhook",
  receivedAt: 0,
  message: { senderId: "s", conversationId, text: id },
});

function deferred(): { promise: Promise<void>; resolve: () => void } {
  let resolve: () => void = () => undefined;
  const promise = new Promise<void>((done) => {
    resolve = done;
  });
  return { promise, resolve: () => resolve() };
}

describe("createMemoryQueue", () => {
  it("refuses with buffer_full once capacity messages are unfinished", async () => {
    const gate = deferred();
    const queue = createMemoryQueue({ capacity: 2, handle: () => gate.promise, onError: () => undefined });
    await queue.enqueue(message("1", "a"));
    await queue.enqueue(message("2", "b"));
    await expect(queue.enqueue(message("3", "c"))).rejects.toMatchObject({
      code: "buffer_full",
      status: 503,
      retryable: true,
    });
    gate.resolve();
    await queue.drain(1_000);
    await expect(queue.enqueue(message("4", "c"))).resolves.toBeUndefined();
  });

  it("processes one conversation in order and one message at a time", async () => {
    const seen: string[] = [];
    let running = 0;
    let maxRunning = 0;
    const queue = createMemoryQueue({
      capacity: 100,
      handle: async (queued) => {
        running += 1;
        maxRunning = Math.max(maxRunning, running);
        await new Promise((resolve) => setTimeout(resolve, Math.random() * 3));
        seen.push(queued.id);
        running -= 1;
      },
      onError: () => undefined,
    });
    for (let index = 0; index < 20; index += 1) await queue.enqueue(message(String(index), "same"));
    expect(await queue.drain(5_000)).toEqual([]);
    expect(seen).toEqual(Array.from({ length: 20 }, (_, index) => String(index)));
    expect(maxRunning).toBe(1);
  });

  it("runs different conversations concurrently while one is stuck", async () => {
    const stuck = deferred();
    const done: string[] = [];
    const queue = createMemoryQueue({
      capacity: 10,
      handle: async (queued) => {
        if (queued.message.conversationId === "slow") await stuck.promise;
        done.push(queued.id);
      },
      onError: () => undefined,
    });
    await queue.enqueue(message("slow-1", "slow"));
    await queue.enqueue(message("slow-2", "slow"));
    await queue.enqueue(message("fast-1", "fast"));
    expect(await queue.drain(50)).toEqual(["slow-1", "slow-2"]);
    expect(done).toEqual(["fast-1"]);
    stuck.resolve();
    expect(await queue.drain(1_000)).toEqual([]);
    expect(done).toEqual(["fast-1", "slow-1", "slow-2"]);
  });

  it("reports a failure and goes on with the next message", async () => {
    const failures: string[] = [];
    const queue = createMemoryQueue({
      capacity: 10,
      handle: (queued) => (queued.id === "bad" ? Promise.reject(new Error("boom")) : Promise.resolve()),
      onError: (queued, error) => failures.push(`${queued.id}: ${(error as Error).message}`),
    });
    await queue.enqueue(message("bad", "a"));
    await queue.enqueue(message("good", "a"));
    expect(await queue.drain(1_000)).toEqual([]);
    expect(failures).toEqual(["bad: boom"]);
    expect(queue.size).toBe(0);
  });

  it("limits how many conversations run at once", async () => {
    const gate = deferred();
    let running = 0;
    let maxRunning = 0;
    const queue = createMemoryQueue({
      capacity: 100,
      concurrency: 3,
      handle: async () => {
        running += 1;
        maxRunning = Math.max(maxRunning, running);
        await gate.promise;
        running -= 1;
      },
      onError: () => undefined,
    });
    for (let index = 0; index < 10; index += 1) await queue.enqueue(message(String(index), String(index)));
    expect(running).toBe(3);
    gate.resolve();
    await queue.drain(1_000);
    expect(maxRunning).toBe(3);
  });
});
