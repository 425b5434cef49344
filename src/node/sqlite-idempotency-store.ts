import type { IdempotencyStore } from "../core/idempotency/idempotency-store.js";
import { createMemoryIdempotencyStore } from "../core/idempotency/memory-idempotency-store.js";
import type { StateDb } from "./sqlite-state.js";

/**
 * Idempotency keys with `state_dir`: committed keys are read from SQLite (the journal writes
 * them with their message); keys of requests still in flight are held in memory, which makes
 * two concurrent requests with one key resolve to one message.
 */
export function createSqliteIdempotencyStore(db: StateDb): IdempotencyStore {
  const inFlight = createMemoryIdempotencyStore();
  const select = db.prepare(
    "SELECT message_id, conversation_id FROM idempotency WHERE channel = ? AND key = ? AND expires_at > ?",
  );
  return {
    reserve(channel, key, record, now) {
      const row = select.get(channel, key, now) as { message_id: string; conversation_id: string } | undefined;
      if (row !== undefined) return Promise.resolve({ messageId: row.message_id, conversationId: row.conversation_id });
      return inFlight.reserve(channel, key, record, now);
    },
    release: (channel, key) => inFlight.release(channel, key),
  };
}
