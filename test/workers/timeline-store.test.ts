/**
 * The message timeline's store on Workers, inside workerd over the pool's real shard objects:
 * the shared store contract through one shard and through several (whose merged pages and summed
 * counts must read as one store), and what only the shards do: prune themselves on their alarm
 * by the configuration's retention, cut long texts, keep a batch when one row is full, and hold
 * a flush no longer than its bound when they do not answer.
 * Each use takes shards of its own (a prefix of its own), so no test sees another's rows.
 */
import { runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { afterEach, describe, expect, it, vi } from "vitest";
import { systemClock } from "../../src/core/clock.js";
import { silentLogger } from "../../src/core/log/logger.js";
import type { TimelineStore, TimelineWrite } from "../../src/core/timeline/timeline-store.js";
import { DeferredTimeline, FLUSH_WAIT_MS } from "../../src/workers/timeline/deferred-timeline.js";
import { createDurableTimelineStore, MAX_TEXT_CHARS } from "../../src/workers/timeline/durable-timeline-store.js";
import { PRUNE_BATCHES_PER_RUN, PRUNE_EVERY_MS } from "../../src/workers/timeline/timeline-shard-object.js";
import { shardName, shardOf } from "../../src/workers/timeline/timeline-shards.js";
import { timelineStoreContract } from "../shared/store-contracts/timeline-store-contract.js";
import { forgetConversations, objectsUse } from "./support/conversations.js";
import { captureLogs } from "./support/fake-receiver.js";
import { channelConfig, SECRET } from "./support/test-config.js";
import { testEnv } from "./support/test-env.js";

const freshPrefix = () => `timeline-test-${crypto.randomUUID()}`;

timelineStoreContract("one Durable Object shard", () =>
  createDurableTimelineStore(env.TIMELINE_SHARDS, { shards: 1, prefix: freshPrefix() }),
);
timelineStoreContract(
  "four Durable Object shards",
  () => createDurableTimelineStore(env.TIMELINE_SHARDS, { shards: 4, prefix: freshPrefix() }),
  { parts: 4 },
);

afterEach(async () => {
  await forgetConversations();
  vi.restoreAllMocks();
});

const HOUR = 3_600_000;

function accepted(channel: string, acceptedAt: number, text?: string): TimelineWrite {
  return {
    id: `m-${crypto.randomUUID()}`,
    channel,
    conversationId: "c1",
    acceptedAt,
    status: "accepted",
    updatedAt: acceptedAt,
    events: [{ type: "accepted", at: acceptedAt, ...(text === undefined ? {} : { text }) }],
  };
}

/**
 * The shards' objects under a configuration that keeps an hour and 32 messages (16 shards: 2
 * each), and a prefix of fresh shard names.
 */
function keepingThirtyTwo(): string {
  const config = channelConfig({
    top: { admin: { token_env: "ADMIN_SECRET" }, timeline: { retention_hours: 1, max_messages: 32 } },
  });
  objectsUse(
    testEnv(config, { WEBHOOK_SECRET: SECRET, ADMIN_SECRET: "workers-admin-secret-abcdefghijklmnopqrstuvwxyz0123" }),
  );
  return freshPrefix();
}

describe("the timeline shards", () => {
  it("prune themselves on their alarm: the retention's window, and each shard's share of max_messages", async () => {
    captureLogs();
    const prefix = keepingThirtyTwo();
    const store = createDurableTimelineStore(env.TIMELINE_SHARDS, { prefix });
    const channel = `timeline-${crypto.randomUUID()}`;
    const now = Date.now();
    const old = accepted(channel, now - 2 * HOUR);
    // Four recent messages of the shard `old` is in.
    const recent: TimelineWrite[] = [];
    while (recent.length < 4) {
      const write = accepted(channel, now - recent.length * 1000);
      if (shardOf(write.id, 16) === shardOf(old.id, 16)) recent.push(write);
    }
    await store.write([old, ...recent], [{ minute: now - 3 * HOUR, series: "accepted", count: 1 }]);
    const stub = env.TIMELINE_SHARDS.get(env.TIMELINE_SHARDS.idFromName(shardName(prefix, shardOf(old.id, 16))));
    const alarm = await runInDurableObject(stub, (_instance, state) => state.storage.getAlarm());
    expect(alarm).toBeGreaterThan(now + PRUNE_EVERY_MS - 60_000);

    const before = await runInDurableObject(stub, (instance) => instance.usage);
    expect(await runDurableObjectAlarm(stub)).toBe(true);
    // Each row forgotten is one row written, as Cloudflare bills a deletion: 3 messages, 1 minute.
    const after = await runInDurableObject(stub, (instance) => instance.usage);
    expect(after.rowsWritten - before.rowsWritten).toBe(4);
    expect(await store.one(old.id)).toBeUndefined();
    const kept = (await store.page({ channel, limit: 10 })).map((row) => row.id);
    expect(kept).toEqual([recent[0]?.id, recent[1]?.id]);
    expect(await store.activity(0)).toEqual([]);
    // Rows are left, so the prune comes again.
    expect(await runInDurableObject(stub, (_instance, state) => state.storage.getAlarm())).not.toBeNull();
  });

  it(`cut far over their share in runs of at most ${PRUNE_BATCHES_PER_RUN} batches, the next run set at once`, async () => {
    captureLogs();
    const prefix = keepingThirtyTwo();
    const store = createDurableTimelineStore(env.TIMELINE_SHARDS, { prefix, shards: 1 });
    const channel = `timeline-${crypto.randomUUID()}`;
    const now = Date.now();
    // A run deletes 10 batches of 1,000: this is 500 over what one run cuts down to the share.
    const messages = Array.from({ length: 10_502 }, (_, index) => accepted(channel, now - index));
    await store.write(messages, []);
    const stub = env.TIMELINE_SHARDS.get(env.TIMELINE_SHARDS.idFromName(shardName(prefix, 0)));
    const alarm = () => runInDurableObject(stub, (_instance, state) => state.storage.getAlarm());
    const alarmRuns = async () => (await runInDurableObject(stub, (instance) => instance.usage)).alarmRuns;

    expect(await runDurableObjectAlarm(stub)).toBe(true);
    // The run left the rest to the next, set at once: it runs by itself, and leaves the share.
    await vi.waitFor(async () => expect(await alarmRuns()).toBe(2), { timeout: 5_000, interval: 20 });
    expect((await store.page({ channel, limit: 10 })).map((row) => row.id)).toEqual([messages[0]?.id, messages[1]?.id]);
    expect(await alarm()).toBeGreaterThan(Date.now() + PRUNE_EVERY_MS - 60_000);
  });

  it("forget everything, and stop their alarm, once the timeline is turned off", async () => {
    captureLogs();
    const config = channelConfig({
      top: { admin: { token_env: "ADMIN_SECRET" }, timeline: { retention_hours: 0 } },
    });
    objectsUse(
      testEnv(config, { WEBHOOK_SECRET: SECRET, ADMIN_SECRET: "workers-admin-secret-abcdefghijklmnopqrstuvwxyz0123" }),
    );
    const prefix = freshPrefix();
    const store = createDurableTimelineStore(env.TIMELINE_SHARDS, { prefix, shards: 1 });
    const message = accepted(`timeline-${crypto.randomUUID()}`, Date.now());
    await store.write([message], []);
    const stub = env.TIMELINE_SHARDS.get(env.TIMELINE_SHARDS.idFromName(shardName(prefix, 0)));
    expect(await runDurableObjectAlarm(stub)).toBe(true);
    expect(await store.one(message.id)).toBeUndefined();
    expect(await runInDurableObject(stub, (_instance, state) => state.storage.getAlarm())).toBeNull();
  });

  it(`keep at most ${MAX_TEXT_CHARS} characters of a text, never half a character`, async () => {
    const store = createDurableTimelineStore(env.TIMELINE_SHARDS, { prefix: freshPrefix() });
    const long = `${"a".repeat(MAX_TEXT_CHARS - 1)}😀 and more`;
    const message = accepted(`timeline-${crypto.randomUUID()}`, Date.now(), long);
    await store.write([message], []);
    const [event] = (await store.one(message.id))?.events ?? [];
    expect(event).toEqual({ type: "accepted", at: message.acceptedAt, text: "a".repeat(MAX_TEXT_CHARS - 1) });
  });

  it(`are waited for at most ${FLUSH_WAIT_MS} ms by a flush: a shard that does not answer holds no run longer`, async () => {
    const never: TimelineStore = {
      write: () => new Promise<void>(() => undefined),
      one: () => undefined,
      page: () => [],
      activity: () => [],
      prune: () => undefined,
    };
    const retention = { windowMs: HOUR, maxMessages: 10, keepText: false };
    const timeline = new DeferredTimeline({ store: never, retention, clock: systemClock, logger: silentLogger });
    const message = accepted(`timeline-${crypto.randomUUID()}`, Date.now());
    timeline.record(message, message.events, "accepted");
    const started = Date.now();
    await timeline.flush();
    expect(Date.now() - started).toBeGreaterThanOrEqual(FLUSH_WAIT_MS - 5);
    expect(Date.now() - started).toBeLessThan(FLUSH_WAIT_MS + 1000);
  });

  it("store the rest of a batch when one message's row cannot take more, and say which", async () => {
    const prefix = freshPrefix();
    const stub = env.TIMELINE_SHARDS.get(env.TIMELINE_SHARDS.idFromName(shardName(prefix, 0)));
    const channel = `timeline-${crypto.randomUUID()}`;
    // Past the 2 MB a Durable Object stores in one value (the store itself cuts texts before this).
    const full = accepted(channel, Date.now(), "é".repeat(1_100_000));
    const fine = accepted(channel, Date.now());
    expect(await stub.write([full, fine], [])).toEqual([full.id]);
    expect(await stub.one(full.id)).toBeNull();
    expect((await stub.one(fine.id))?.id).toBe(fine.id);
  });
});
