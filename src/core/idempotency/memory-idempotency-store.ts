import { IDEMPOTENCY_TTL_MS, type IdempotencyRecord, type IdempotencyStore } from "./idempotency-store.js";

/** An in-process idempotency store: keys expire after 24 h; at most `maxKeys` are kept (oldest go first). */
export function createMemoryIdempotencyStore(maxKeys = 100_000, ttlMs = IDEMPOTENCY_TTL_MS): IdempotencyStore {
  const entries = new Map<string, { record: IdempotencyRecord; expiresAt: number }>();
  const id = (channel: string, key: string) => `${channel.length}:${channel}:${key}`;
  return {
    reserve(channel, key, record, now) {
      const existing = entries.get(id(channel, key));
      if (existing !== undefined && existing.expiresAt > now) return Promise.resolve(existing.record);
      entries.delete(id(channel, key));
      entries.set(id(channel, key), { record, expiresAt: now + ttlMs });
      for (const [oldest, entry] of entries) {
        if (entries.size <= maxKeys && entry.expiresAt > now) break;
        entries.delete(oldest);
      }
      return Promise.resolve(undefined);
    },
    release(channel, key) {
      entries.delete(id(channel, key));
      return Promise.resolve();
    },
  };
}
