import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it, vi } from "vitest";
import type { Clock } from "../../../src/core/clock.js";
import type { Config } from "../../../src/core/config/config-schema.js";
import { validateConfig } from "../../../src/core/config/validate-config.js";
import { idleCutoff } from "../../../src/core/conversation/idle-conversation.js";
import { retentionCutoff } from "../../../src/core/conversation/memory-retention.js";
import { openStateBackend } from "../../../src/node/state/open-state-backend.js";
import { scheduleStateUpkeep } from "../../../src/node/state/state-upkeep.js";
import { configDocument } from "../../support/configs.js";
import { createLogSink } from "../../support/log-sink.js";

const HOUR = 3_600_000;
const NOW = 10_000 * HOUR;
const TIMING = { firstMs: 1_000, everyMs: HOUR };

const folders: string[] = [];
afterEach(async () => {
  vi.useRealTimers();
  await Promise.all(folders.splice(0).map((folder) => rm(folder, { recursive: true, force: true })));
});

/** A state whose idle conversations' pass finds nothing. */
const NONE = () => Promise.resolve(0);

/** Lets the prune's promise chain settle under fake timers. */
const settle = () => vi.advanceTimersByTimeAsync(0);

describe("the conversation memory's prune schedule", () => {
  it("prunes shortly after the start, then hourly, each time from the retention's cutoff then", async () => {
    vi.useFakeTimers();
    let now = NOW;
    const cutoffs: number[] = [];
    const state = {
      pruneConversations: (cutoff: number) => Promise.resolve(cutoffs.push(cutoff)),
      forgetIdleConversations: NONE,
      pruneExpired: NONE,
    };
    const prune = scheduleStateUpkeep(state, { hours: 24, now: () => now }, createLogSink().logger, TIMING);
    await vi.advanceTimersByTimeAsync(TIMING.firstMs - 1);
    expect(cutoffs).toEqual([]);
    await vi.advanceTimersByTimeAsync(1);
    expect(cutoffs).toEqual([retentionCutoff(NOW, 24)]);
    now += HOUR;
    await vi.advanceTimersByTimeAsync(HOUR);
    expect(cutoffs).toEqual([retentionCutoff(NOW, 24), retentionCutoff(NOW + HOUR, 24)]);
    prune.stop();
    await vi.advanceTimersByTimeAsync(3 * HOUR);
    expect(cutoffs).toHaveLength(2);
  });

  it("never runs two prunes at once: the next is timed from the end of the last", async () => {
    vi.useFakeTimers();
    let running = 0;
    let most = 0;
    const state = {
      pruneConversations: async () => {
        running += 1;
        most = Math.max(most, running);
        await new Promise((resolve) => setTimeout(resolve, 2 * HOUR));
        running -= 1;
        return 0;
      },
      forgetIdleConversations: NONE,
      pruneExpired: NONE,
    };
    const prune = scheduleStateUpkeep(state, { hours: 1, now: () => NOW }, createLogSink().logger, TIMING);
    await vi.advanceTimersByTimeAsync(10 * HOUR);
    prune.stop();
    expect(most).toBe(1);
  });

  it("logs a failing prune once at warn, carries on, and says when pruning works again", async () => {
    vi.useFakeTimers();
    const { logger, lines } = createLogSink();
    let failing = true;
    const state = {
      pruneConversations: () => (failing ? Promise.reject(new Error("disk I/O error")) : Promise.resolve(3)),
      forgetIdleConversations: NONE,
      pruneExpired: NONE,
    };
    const prune = scheduleStateUpkeep(state, { hours: 1, now: () => NOW }, logger, TIMING);
    await vi.advanceTimersByTimeAsync(TIMING.firstMs + 2 * HOUR);
    const warnings = lines.filter((line) => line.level === "warn");
    expect(warnings).toEqual([
      expect.objectContaining({
        msg: "cannot prune conversation memory; old turns stay stored until a prune succeeds",
        error: "disk I/O error",
      }),
    ]);
    failing = false;
    await vi.advanceTimersByTimeAsync(HOUR);
    expect(lines.at(-1)).toMatchObject({ level: "info", msg: "pruning conversation memory again", deleted_turns: 3 });
    prune.stop();
  });

  it("forgets idle conversations after each prune, from the idle cutoff then, and says its own failures", async () => {
    vi.useFakeTimers();
    const { logger, lines } = createLogSink();
    let now = NOW;
    const order: string[] = [];
    let failing = true;
    const state = {
      pruneConversations: () => {
        order.push("turns");
        return Promise.resolve(0);
      },
      forgetIdleConversations: (cutoff: number) => {
        order.push(`idle ${cutoff}`);
        return failing ? Promise.reject(new Error("database is locked")) : Promise.resolve(2);
      },
      pruneExpired: (now: number) => {
        order.push(`expired ${now}`);
        return Promise.resolve(0);
      },
    };
    const prune = scheduleStateUpkeep(state, { hours: 24, now: () => now }, logger, TIMING);
    await vi.advanceTimersByTimeAsync(TIMING.firstMs);
    expect(order).toEqual(["turns", `idle ${idleCutoff(NOW)}`, `expired ${NOW}`]);
    expect(lines.filter((line) => line.level === "warn")).toEqual([
      expect.objectContaining({
        msg: "cannot forget idle conversations; their reply counters stay stored until a pass succeeds",
        error: "database is locked",
      }),
    ]);
    failing = false;
    now += HOUR;
    await vi.advanceTimersByTimeAsync(HOUR);
    expect(order.slice(-2)).toEqual([`idle ${idleCutoff(NOW + HOUR)}`, `expired ${NOW + HOUR}`]);
    expect(lines.at(-1)).toMatchObject({
      level: "info",
      msg: "forgetting idle conversations again",
      forgotten_conversations: 2,
    });
    prune.stop();
  });

  it("logs nothing of a prune that ends after the stop", async () => {
    vi.useFakeTimers();
    const { logger, lines } = createLogSink();
    let fail: (error: Error) => void = () => undefined;
    const state = {
      pruneConversations: () =>
        new Promise<number>((_resolve, reject) => {
          fail = reject;
        }),
      forgetIdleConversations: NONE,
      pruneExpired: NONE,
    };
    const prune = scheduleStateUpkeep(state, { hours: 1, now: () => NOW }, logger, TIMING);
    await vi.advanceTimersByTimeAsync(TIMING.firstMs);
    prune.stop();
    fail(new Error("pool ended"));
    await settle();
    expect(lines).toEqual([]);
  });
});

/** A configuration with `state_dir` and the retention given. */
function stateConfig(stateDir: string, hours: number): Config {
  const result = validateConfig(
    configDocument(
      {},
      { state_dir: stateDir, conversation_memory: { retention_hours: hours }, timeline: { retention_hours: 0 } },
    ),
  );
  if (!result.ok) throw new Error(JSON.stringify(result.problems));
  return result.config;
}

describe("the service's state", () => {
  it("with state_dir, reads and prunes conversation memory by conversation_memory.retention_hours", async () => {
    const stateDir = await mkdtemp(join(tmpdir(), "webhook-channel-prune-"));
    folders.push(stateDir);
    const clock: Clock = { now: () => NOW };
    // Only the prune's timer: the group commit runs on setImmediate.
    vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout"] });
    const state = await openStateBackend(stateConfig(stateDir, 2), clock, createLogSink().logger, () => undefined);
    const reader = await openStateBackend(
      stateConfig(stateDir, 2),
      clock,
      createLogSink().logger,
      () => undefined,
      "reader",
    );
    try {
      await state.conversations.append("c", [
        { role: "user", text: "three hours ago", at: NOW - 3 * HOUR },
        { role: "assistant", text: "an hour ago", at: NOW - HOUR },
      ]);
      expect((await reader.conversations.history("c", 10)).map((turn) => turn.text)).toEqual(["an hour ago"]);
      const stored = () => state.sqlite?.db.prepare("SELECT count(*) AS n FROM turns").get() as { n: number };
      expect(stored().n).toBe(2);
      await vi.advanceTimersByTimeAsync(60_000);
      expect(stored().n).toBe(1);
    } finally {
      vi.useRealTimers();
      await reader.close();
      await state.close();
    }
  });

  it("with state_dir, deletes expired idempotency keys while it runs, not only at its start", async () => {
    const stateDir = await mkdtemp(join(tmpdir(), "webhook-channel-prune-"));
    folders.push(stateDir);
    let now = NOW;
    const clock: Clock = { now: () => now };
    vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout"] });
    const state = await openStateBackend(stateConfig(stateDir, 2), clock, createLogSink().logger, () => undefined);
    try {
      const db = state.sqlite?.db;
      if (db === undefined) throw new Error("no state file");
      const insert = db.prepare(
        "INSERT INTO idempotency (channel, key, message_id, conversation_id, expires_at) VALUES ('webhook', ?, ?, 'c', ?)",
      );
      const keys = () => db.prepare("SELECT key FROM idempotency ORDER BY key").pluck().all();
      // A day in: one key taken at the start has expired, one taken an hour ago has not.
      now += 24 * HOUR;
      insert.run("early", "m1", NOW + 24 * HOUR - 1);
      insert.run("recent", "m2", now + 23 * HOUR);
      await vi.advanceTimersByTimeAsync(60_000);
      expect(keys()).toEqual(["recent"]);
      now += 24 * HOUR;
      await vi.advanceTimersByTimeAsync(HOUR);
      expect(keys()).toEqual([]);
    } finally {
      vi.useRealTimers();
      await state.close();
    }
  });

  it("as the delivery thread's reader, prunes nothing: the service's state does", async () => {
    const stateDir = await mkdtemp(join(tmpdir(), "webhook-channel-prune-"));
    folders.push(stateDir);
    const clock: Clock = { now: () => NOW };
    const config = stateConfig(stateDir, 2);
    const writer = await openStateBackend(config, clock, createLogSink().logger, () => undefined);
    await writer.conversations.append("c", [{ role: "user", text: "three hours ago", at: NOW - 3 * HOUR }]);
    await writer.close();
    vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout"] });
    const reader = await openStateBackend(config, clock, createLogSink().logger, () => undefined, "reader");
    try {
      await vi.advanceTimersByTimeAsync(3 * HOUR);
      expect(reader.sqlite?.db.prepare("SELECT count(*) AS n FROM turns").get()).toEqual({ n: 1 });
    } finally {
      vi.useRealTimers();
      await reader.close();
    }
  });
});
