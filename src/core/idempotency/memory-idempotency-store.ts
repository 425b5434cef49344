import { IDEMPOTENCY_TTL_MS, type IdempotencyStore, PENDING_LEASE_MS, type Reservation } from "./idempotency-store.js";

type Entry = Reservation & { expiresAt: number };

/**
 * An in-process idempotency store: committed keys expire after 24 h, pending ones after the
 * lease; each channel keeps at most `maxKeys` (the oldest go first), so that one channel's
 * clients, sending keys of their own, cannot push another channel's keys out before their time.
 */
export function createMemoryIdempotencyStore(maxKeys = 100_000, ttlMs = IDEMPOTENCY_TTL_MS): IdempotencyStore {
  const channels = new Map<string, Map<string, Entry>>();
  const keysOf = (channel: string): Map<string, Entry> => {
    let keys = channels.get(channel);
    if (keys === undefined) {
      keys = new Map();
      channels.set(channel, keys);
    }
    return keys;
  };
  return {
    reserve(channel, key, record, now) {
      const entries = keysOf(channel);
      const existing = entries.get(key);
      if (existing !== undefined && existing.expiresAt > now) {
        return Promise.resolve({ record: existing.record, committed: existing.committed });
      }
      entries.delete(key);
      entries.set(key, { record, committed: false, expiresAt: now + PENDING_LEASE_MS });
      for (const [oldest, entry] of entries) {
        if (entries.size <= maxKeys && entry.expiresAt > now) break;
        entries.delete(oldest);
      }
      return Promise.resolve(undefined);
    },
    commit(channel, key, messageId, now) {
      const entries = keysOf(channel);
      const entry = entries.get(key);
      if (entry?.record.messageId === messageId) {
        entries.set(key, { record: entry.record, committed: true, expiresAt: now + ttlMs });
      }
      return Promise.resolve();
    },
    release(channel, key, messageId) {
      // Only a pending key: a committed one answers for its message, whoever releases.
      const entries = keysOf(channel);
      const entry = entries.get(key);
      if (entry?.committed === false && entry.record.messageId === messageId) entries.delete(key);
      return Promise.resolve();
    },
  };
}
