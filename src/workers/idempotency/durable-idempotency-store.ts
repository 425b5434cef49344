import {
  IDEMPOTENCY_TTL_MS,
  type IdempotencyStore,
  idempotencyId,
  PENDING_LEASE_MS,
} from "../../core/idempotency/idempotency-store.js";
import type { IdempotencyObject } from "./idempotency-object.js";

/**
 * The core's IdempotencyStore on Durable Objects: one {@link IdempotencyObject} per channel
 * and key, so a key is remembered for 24 h across isolates and locations.
 */
export function createDurableIdempotencyStore(
  namespace: DurableObjectNamespace<IdempotencyObject>,
  ttlMs: number = IDEMPOTENCY_TTL_MS,
): IdempotencyStore {
  const stub = (channel: string, key: string) => namespace.get(namespace.idFromName(idempotencyId(channel, key)));
  return {
    async reserve(channel, key, record, now) {
      return (await stub(channel, key).reserve(record, now, PENDING_LEASE_MS)) ?? undefined;
    },
    async commit(channel, key, messageId, now) {
      await stub(channel, key).commit(messageId, now, ttlMs);
    },
    async release(channel, key, messageId) {
      await stub(channel, key).release(messageId);
    },
  };
}
