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
      const object = stub(channel, key);
      try {
        return (await object.reserve(record, now, PENDING_LEASE_MS)) ?? undefined;
      } catch (error) {
        // The call may have failed after the object took the key (its answer lost on the way):
        // this request's reservation is deleted at once, so the client's retry is taken rather
        // than answered 409 for the lease. Only this message's, so a miss changes nothing; a
        // delete that fails too leaves the reservation to its lease.
        // A stub that threw is broken for every later call (Cloudflare's stub docs): a new one.
        await stub(channel, key)
          .release(record.messageId)
          .catch(() => undefined);
        throw error;
      }
    },
    async commit(channel, key, messageId, now) {
      await stub(channel, key).commit(now, ttlMs, messageId);
    },
    async release(channel, key, messageId) {
      await stub(channel, key).release(messageId);
    },
  };
}
