import { IDEMPOTENCY_TTL_MS, type IdempotencyStore } from "../../../core/idempotency/idempotency-store.js";
import { createMemoryIdempotencyStore } from "../../../core/idempotency/memory-idempotency-store.js";
import type { QueuedMessage } from "../../../core/message/inbound-message.js";
import { deleteInSlices } from "./sqlite-sliced-delete.js";
import type { StateDb } from "./sqlite-state.js";

/**
 * Idempotency keys with `state_dir`: committed keys are read from SQLite, where the journal
 * writes them in the same transaction as their message; pending ones (requests still being
 * queued) are held in memory, which makes concurrent requests with one key resolve to one
 * message.
 */
export function createSqliteIdempotencyStore(db: StateDb): IdempotencyStore {
  const pending = createMemoryIdempotencyStore();
  const select = db.prepare(
    "SELECT message_id, conversation_id, fingerprint FROM idempotency WHERE channel = ? AND key = ? AND expires_at > ?",
  );
  return {
    reserve(channel, key, record, now) {
      const row = select.get(channel, key, now) as
        | { message_id: string; conversation_id: string; fingerprint: string | null }
        | undefined;
      if (row !== undefined) {
        const record = { messageId: row.message_id, conversationId: row.conversation_id };
        return Promise.resolve({
          record: row.fingerprint === null ? record : { ...record, fingerprint: row.fingerprint },
          committed: true,
        });
      }
      return pending.reserve(channel, key, record, now);
    },
    // The row is already committed with the message; the pending entry is no longer needed.
    commit: (channel, key, messageId) => pending.release(channel, key, messageId),
    release: (channel, key, messageId) => pending.release(channel, key, messageId),
  };
}

/**
 * Deletes the idempotency keys past their 24 h at `now`, slice after slice through the
 * `expires_at` index, behind `fence`; resolves with how many.
 */
export function pruneIdempotencyKeys(db: StateDb, now: number, fence: () => void, slice?: number): Promise<number> {
  return deleteInSlices(
    db,
    "DELETE FROM idempotency WHERE rowid IN (SELECT rowid FROM idempotency WHERE expires_at <= ? ORDER BY expires_at LIMIT ?)",
    [now],
    fence,
    slice,
  );
}

/** An `idempotency` row: channel, key, message id, conversation id, expiry, fingerprint. */
export type IdempotencyRow = [string, string, string, string, number, string | null];

/**
 * The row that commits an accepted message's `Idempotency-Key` in the message's transaction,
 * for 24 h from receipt; undefined for a message without a key.
 */
export function idempotencyRow(queued: QueuedMessage): IdempotencyRow | undefined {
  const { channel, idempotencyKey, id, receivedAt, message, idempotencyFingerprint } = queued;
  if (idempotencyKey === undefined) return undefined;
  const expiresAt = receivedAt + IDEMPOTENCY_TTL_MS;
  return [channel, idempotencyKey, id, message.conversationId, expiresAt, idempotencyFingerprint ?? null];
}
