import {
  IDEMPOTENCY_TTL_MS,
  type IdempotencyStore,
  idempotencyId,
  PENDING_LEASE_MS,
  type Reservation,
} from "./idempotency-store.js";

/**
 * An in-process idempotency store: committed keys expire after 24 h, pending ones after the
 * lease; at most `maxKeys` are kept (the oldest go first).
 */
export function createMemoryIdempotencyStore(maxKeys = 100_000, ttlMs = IDEMPOTENCY_TTL_MS): IdempotencyStore {
  const entries = new Map<string, Reservation & { expiresAt: number }>();
  return {
    reserve(channel, key, record, now) {
      const id = idempotencyId(channel, key);
      const existing = entries.get(id);
      if (existing !== undefined && existing.expiresAt > now) {
        return Promise.resolve({ record: existing.record, committed: existing.committed });
      }
      entries.delete(id);
      entries.set(id, { record, committed: false, expiresAt: now + PENDING_LEASE_MS });
      for (const [oldest, entry] of entries) {
        if (entries.size <= maxKeys && entry.expiresAt > now) break;
        entries.delete(oldest);
      }
      return Promise.resolve(undefined);
    },
    commit(channel, key, messageId, now) {
      const id = idempotencyId(channel, key);
      const entry = entries.get(id);
      if (entry?.record.messageId === messageId) {
        entries.set(id, { record: entry.record, committed: true, expiresAt: now + ttlMs });
      }
      return Promise.resolve();
    },
    release(channel, key, messageId) {
      // Only a pending key: a committed one answers for its message, whoever releases.
      const id = idempotencyId(channel, key);
      const entry = entries.get(id);
      if (entry?.committed === false && entry.record.messageId === messageId) entries.delete(id);
      return Promise.resolve();
    },
  };
}
