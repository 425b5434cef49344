import { mkdtemp } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { systemClock } from "../../../src/core/clock.js";
import { silentLogger } from "../../../src/core/log/logger.js";
import { COMMIT_LAG_MS } from "../../../src/node/queue/commit-lag.js";
import { createJobQueue } from "../../../src/node/queue/job-queue.js";
import { createNodeReadiness } from "../../../src/node/service/node-readiness.js";
import { createMemoryBackend } from "../../../src/node/state/memory-backend.js";
import { openSqliteBackend } from "../../../src/node/state/sqlite/sqlite-backend.js";
import { frozenLaneStore } from "../../support/frozen-lane-store.js";
import { type ServiceHarness, startHarness } from "../../support/node-service.js";
import { waitFor } from "../../support/wait-for.js";

let harness: ServiceHarness | undefined;

afterEach(async () => {
  await harness?.close();
  harness = undefined;
});

async function readyz(method = "GET"): Promise<{ status: number; body: Record<string, unknown> | undefined }> {
  const response = await fetch(`${harness?.baseUrl}/readyz`, { method });
  const text = await response.text();
  return { status: response.status, body: text === "" ? undefined : (JSON.parse(text) as Record<string, unknown>) };
}

describe("GET /readyz on Node", () => {
  it("answers ready with an empty queue, the state mode and the delivery thread", async () => {
    harness = await startHarness({ buffer_capacity: 7 });
    expect(await readyz()).toEqual({
      status: 200,
      body: {
        status: "ready",
        queue: { depth: 0, capacity: 7, oldest_pending_ms: 0 },
        dead_letters: 0,
        state: "memory",
        delivery_thread: "off",
      },
    });
    expect(await readyz("HEAD")).toEqual({ status: 200, body: undefined });
  });

  it("answers 503 full while the buffer is full, with the age of the oldest pending message", async () => {
    harness = await startHarness(
      { buffer_capacity: 1, delivery: { initial_delay_ms: 60_000, max_attempts: 5 } },
      { status: () => 503 },
    );
    expect((await harness.post({ sender_id: "a", text: "stuck" })).status).toBe(200);
    const replies = harness.replies;
    await waitFor(() => replies[0], 5_000, "the first attempt");
    // Not a wait for an event: some age for the oldest message, asserted below.
    await new Promise((resolve) => setTimeout(resolve, 20));
    const { status, body } = await readyz();
    expect(status).toBe(503);
    expect(body).toMatchObject({ status: "full", queue: { depth: 1, capacity: 1 } });
    expect((body?.queue as { oldest_pending_ms: number } | undefined)?.oldest_pending_ms).toBeGreaterThan(0);
  });

  it("answers 503 draining once the stop began", async () => {
    harness = await startHarness({ delivery: { initial_delay_ms: 60_000 } }, { status: () => 503 });
    expect((await harness.post({ sender_id: "a", text: "pending" })).status).toBe(200);
    const stopping = harness.service.stop(500);
    const { status, body } = await readyz();
    expect(status).toBe(503);
    expect(body?.status).toBe("draining");
    await stopping;
  });

  it("counts dead letters kept in SQLite with state_dir", async () => {
    const stateDir = await mkdtemp(join(tmpdir(), "webhook-channel-ready-"));
    harness = await startHarness({ delivery: { max_attempts: 1 } }, { status: () => 400 }, { state_dir: stateDir });
    expect((await harness.post({ sender_id: "a", text: "refused" })).status).toBe(200);
    let body: Record<string, unknown> | undefined;
    for (let tries = 0; tries < 100 && body?.dead_letters !== 1; tries += 1) {
      body = (await readyz()).body;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    expect(body).toMatchObject({ status: "ready", dead_letters: 1, state: "sqlite" });
  });
});

describe("createNodeReadiness", () => {
  it("reports unavailable when the state database cannot be written", async () => {
    const state = openSqliteBackend(await mkdtemp(join(tmpdir(), "webhook-channel-ready-")), silentLogger);
    const queue = createJobQueue({ capacity: 10, run: () => new Promise(() => undefined), logger: silentLogger });
    const readiness = createNodeReadiness({
      queues: () => [queue],
      state,
      isShuttingDown: () => false,
      deliveryThread: false,
      now: () => 0,
    });
    expect(await readiness.report()).toMatchObject({ status: "ready", state: "sqlite" });
    await state.close();
    // Its dead letters cannot be counted either: not a count that would read as the store's.
    expect(await readiness.report()).toMatchObject({ status: "unavailable", dead_letters: null });
  });

  it("stays unavailable after a failed write until a write check begun after it commits, then forgets it", async () => {
    const memory = createMemoryBackend(systemClock);
    let confirmedAt: number | undefined;
    const queue = createJobQueue({
      capacity: 10,
      store: { ...memory.lanes, add: () => Promise.reject(new Error("database or disk is full")) },
      run: () => new Promise(() => undefined),
      logger: silentLogger,
    });
    const readiness = createNodeReadiness({
      queues: () => [queue],
      state: { ...memory, writesConfirmedAt: () => confirmedAt },
      isShuttingDown: () => false,
      deliveryThread: false,
      now: () => 0,
    });
    const before = performance.now();
    await expect(
      queue.enqueue({
        id: "m1",
        channel: "web",
        receivedAt: 0,
        message: { senderId: "s", conversationId: "c", text: "hi" },
      }),
    ).rejects.toThrow("disk is full");
    expect(readiness.report()).toMatchObject({ status: "unavailable" });
    // A check that began before the failure says nothing of it; a failing check confirms nothing.
    confirmedAt = before;
    expect(readiness.report()).toMatchObject({ status: "unavailable" });
    confirmedAt = undefined;
    expect(readiness.report()).toMatchObject({ status: "unavailable" });
    confirmedAt = performance.now();
    expect(readiness.report()).toMatchObject({ status: "ready" });
    expect(queue.storeError).toBeUndefined();
  });

  it("reports full with commits_behind while the database is behind with accepted messages' commits", async () => {
    let now = 0;
    const { store, thaw } = frozenLaneStore();
    const queue = createJobQueue({
      capacity: 10,
      store,
      now: () => now,
      run: (job) => Promise.resolve({ kind: "done", job }),
      logger: silentLogger,
    });
    const readiness = createNodeReadiness({
      queues: () => [queue],
      state: createMemoryBackend(systemClock),
      isShuttingDown: () => false,
      deliveryThread: false,
      now: () => now,
    });
    const accepted = queue.enqueue({
      id: "m1",
      channel: "web",
      receivedAt: 0,
      message: { senderId: "s", conversationId: "c", text: "hi" },
    });
    expect(await readiness.report()).not.toHaveProperty("commits_behind");
    now = COMMIT_LAG_MS + 1;
    expect(await readiness.report()).toMatchObject({ status: "full", commits_behind: true, queue: { depth: 1 } });
    thaw();
    await accepted;
    const after = await readiness.report();
    expect(after).toMatchObject({ status: "ready" });
    expect(after).not.toHaveProperty("commits_behind");
    await queue.drain(1_000);
  });
});
