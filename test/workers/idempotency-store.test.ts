/**
 * The Durable Object idempotency store beyond the shared contract: what a lost answer leaves
 * behind, and the alarm that forgets a key, inside workerd.
 */
import { runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { IDEMPOTENCY_TTL_MS, idempotencyId, PENDING_LEASE_MS } from "../../src/core/idempotency/idempotency-store.js";
import { createDurableIdempotencyStore } from "../../src/workers/idempotency/durable-idempotency-store.js";
import { IdempotencyObject } from "../../src/workers/idempotency/idempotency-object.js";

const fresh = () => ({
  channel: `channel-${crypto.randomUUID()}`,
  key: `key-${crypto.randomUUID()}`,
  record: { messageId: crypto.randomUUID(), conversationId: "c1" },
});

/**
 * The pool's namespace, except that each object's `reserve` loses its answer once: the object
 * takes the key, and the caller gets an error, as when the connection drops after the write.
 */
function losingFirstAnswer(): DurableObjectNamespace<IdempotencyObject> {
  const real = env.IDEMPOTENCY;
  let lost = false;
  const namespace = {
    idFromName: (name: string) => real.idFromName(name),
    get: (id: DurableObjectId) => {
      const stub = real.get(id);
      return {
        reserve: async (...args: Parameters<IdempotencyObject["reserve"]>) => {
          const answer = await stub.reserve(...args);
          if (lost) return answer;
          lost = true;
          throw new Error("Network connection lost.");
        },
        commit: (...args: Parameters<IdempotencyObject["commit"]>) => stub.commit(...args),
        release: (...args: Parameters<IdempotencyObject["release"]>) => stub.release(...args),
      };
    },
  };
  return namespace as unknown as DurableObjectNamespace<IdempotencyObject>;
}

/** The alarm of the object that holds `key` of `channel`. */
function alarmOf(channel: string, key: string): Promise<number | null> {
  const stub = env.IDEMPOTENCY.get(env.IDEMPOTENCY.idFromName(idempotencyId(channel, key)));
  return runInDurableObject(stub, (_object, state) => state.storage.getAlarm());
}

describe("Durable Object idempotency store", () => {
  it("adds the fingerprint to an object made before it was kept: its key answers any body, a new one keeps it", async () => {
    const { channel, key, record } = fresh();
    const stub = env.IDEMPOTENCY.get(env.IDEMPOTENCY.idFromName(idempotencyId(channel, key)));
    const now = Date.now();
    const answers = await runInDurableObject(stub, async (_object, state) => {
      // The table as the version before made it, with the key it committed.
      state.storage.sql.exec("DROP TABLE reservation");
      state.storage.sql.exec(
        "CREATE TABLE reservation (only INTEGER PRIMARY KEY CHECK (only = 1), message_id TEXT NOT NULL, conversation_id TEXT NOT NULL, committed INTEGER NOT NULL DEFAULT 0, expires_at INTEGER NOT NULL)",
      );
      state.storage.sql.exec(
        "INSERT INTO reservation VALUES (1, ?, ?, 1, ?)",
        record.messageId,
        record.conversationId,
        now + IDEMPOTENCY_TTL_MS,
      );
      const upgraded = new IdempotencyObject(state, {});
      const old = await upgraded.reserve({ ...record, messageId: "other", fingerprint: "f2" }, now, PENDING_LEASE_MS);
      state.storage.sql.exec("DELETE FROM reservation");
      const made = await upgraded.reserve({ ...record, fingerprint: "f1" }, now, PENDING_LEASE_MS);
      const kept = await upgraded.reserve({ ...record, messageId: "other", fingerprint: "f2" }, now, PENDING_LEASE_MS);
      return { old, made, kept };
    });
    expect(answers.old).toEqual({ record, committed: true });
    expect(answers.made).toBeNull();
    expect(answers.kept).toEqual({ record: { ...record, fingerprint: "f1" }, committed: false });
  });

  it("deletes the reservation of a reserve whose answer was lost, so the retry takes the key", async () => {
    const store = createDurableIdempotencyStore(losingFirstAnswer());
    const { channel, key, record } = fresh();
    const now = Date.now();
    await expect(store.reserve(channel, key, record, now)).rejects.toThrow("Network connection lost");
    const retry = { messageId: crypto.randomUUID(), conversationId: "c1" };
    expect(await store.reserve(channel, key, retry, now + 1)).toBeUndefined();
  });

  it("keeps a key for a day once its own message commits it, and only for the lease when another message tries", async () => {
    const store = createDurableIdempotencyStore(env.IDEMPOTENCY);
    const { channel, key, record } = fresh();
    const before = Date.now();
    expect(await store.reserve(channel, key, record, before)).toBeUndefined();
    const leaseAlarm = await alarmOf(channel, key);
    expect(leaseAlarm).toBeGreaterThanOrEqual(before + PENDING_LEASE_MS);
    expect(leaseAlarm).toBeLessThan(before + IDEMPOTENCY_TTL_MS);

    await store.commit(channel, key, crypto.randomUUID(), before + 1);
    expect(await alarmOf(channel, key)).toBe(leaseAlarm);

    await store.commit(channel, key, record.messageId, before + 2);
    expect(await alarmOf(channel, key)).toBeGreaterThanOrEqual(before + IDEMPOTENCY_TTL_MS);
  });

  it("still commits and releases for a caller of the version before, which names no message", async () => {
    const store = createDurableIdempotencyStore(env.IDEMPOTENCY);
    const first = fresh();
    const before = Date.now();
    expect(await store.reserve(first.channel, first.key, first.record, before)).toBeUndefined();
    const object = (channel: string, key: string) =>
      env.IDEMPOTENCY.get(env.IDEMPOTENCY.idFromName(idempotencyId(channel, key)));
    await object(first.channel, first.key).commit(before + 1, IDEMPOTENCY_TTL_MS);
    expect(await store.reserve(first.channel, first.key, fresh().record, before + 2)).toEqual({
      record: first.record,
      committed: true,
    });

    const second = fresh();
    expect(await store.reserve(second.channel, second.key, second.record, before)).toBeUndefined();
    await object(second.channel, second.key).release();
    expect(await store.reserve(second.channel, second.key, fresh().record, before + 1)).toBeUndefined();
  });
});
