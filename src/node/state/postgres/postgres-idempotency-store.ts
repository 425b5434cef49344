import type pg from "pg";
import {
  IDEMPOTENCY_TTL_MS,
  type IdempotencyRecord,
  type IdempotencyStore,
  PENDING_LEASE_MS,
  type Reservation,
} from "../../../core/idempotency/idempotency-store.js";
import { deleteInBatches } from "./postgres-batched-delete.js";
import { asStateError, mayHaveCommitted } from "./postgres-state-error.js";
import { createUnsettledReservations } from "./unsettled-reservations.js";

/**
 * Claims a key: a new row, or the row of an expired reservation (pending past its lease,
 * committed past its 24 h), pending for `record`. A live row is left alone (the WHERE of the
 * upsert), and no row comes back then.
 */
const CLAIM = `INSERT INTO webhook_channel.idempotency AS i (channel, key, message_id, conversation_id, committed, expires_at, fingerprint)
VALUES ($1, $2, $3, $4, false, $5, $7)
ON CONFLICT (channel, key) DO UPDATE SET message_id = excluded.message_id,
  conversation_id = excluded.conversation_id, committed = false, expires_at = excluded.expires_at,
  fingerprint = excluded.fingerprint
WHERE i.expires_at <= $6
RETURNING 1`;

const LIVE = `SELECT message_id, conversation_id, committed, fingerprint FROM webhook_channel.idempotency
WHERE channel = $1 AND key = $2 AND expires_at > $3`;

/** Claims before giving up: each lost race means another request changed the key meanwhile. */
const CLAIM_TRIES = 5;

/**
 * Idempotency keys with `postgres_url_env`, atomic across replicas: the `idempotency` row is the
 * reservation, so a retry sent to another replica finds it. `reserve` is one upsert that only
 * a new or expired key lets through; when it claims nothing, the live row is read and answered
 * (pending or committed). A reservation released or expired between the two is claimed again.
 *
 * The job store writes a key committed in the statement that stores its message (with
 * `expires_at` 24 h from receipt), so a key never answers for a message that was lost; `commit`
 * then moves the 24 h to start at `now`, as the other stores count them, and marks the row
 * committed for a caller that queues elsewhere. Times are the callers' `now`, never the
 * database's, so that replicas and tests agree with the memory store. A reserve that failed and
 * may have committed all the same, and a release that failed, are released once the database
 * answers again (see `unsettled-reservations.ts`): their message was never queued.
 */
export function createPostgresIdempotencyStore(pool: pg.Pool): IdempotencyStore {
  const unsettled = createUnsettledReservations(pool);
  const reserve = async (
    channel: string,
    key: string,
    record: IdempotencyRecord,
    now: number,
  ): Promise<Reservation | undefined> => {
    for (let tries = 0; tries < CLAIM_TRIES; tries += 1) {
      const claimed = await pool.query(CLAIM, [
        channel,
        key,
        record.messageId,
        record.conversationId,
        now + PENDING_LEASE_MS,
        now,
        storedFingerprint(record.messageId, record.fingerprint),
      ]);
      if ((claimed.rowCount ?? 0) > 0) return undefined;
      // Read in a snapshot of its own (READ COMMITTED), so a row committed by the request that
      // beat the claim is seen here.
      const live = await pool.query<{
        message_id: string;
        conversation_id: string;
        committed: boolean;
        fingerprint: string | null;
      }>(LIVE, [channel, key, now]);
      const row = live.rows[0];
      if (row !== undefined) {
        const found = { messageId: row.message_id, conversationId: row.conversation_id };
        const fingerprint = fingerprintOf(row.message_id, row.fingerprint);
        const record = fingerprint === undefined ? found : { ...found, fingerprint };
        return { record, committed: row.committed };
      }
    }
    throw new Error(`the Idempotency-Key of channel ${channel} changed hands ${CLAIM_TRIES} times during one request`);
  };

  return {
    async reserve(channel, key, record, now) {
      try {
        return await reserve(channel, key, record, now);
      } catch (error) {
        if (mayHaveCommitted(error)) unsettled.add(channel, key, record.messageId);
        throw asStateError(error);
      }
    },
    async commit(channel, key, messageId, now) {
      try {
        await pool.query(
          "UPDATE webhook_channel.idempotency SET committed = true, expires_at = $4 WHERE channel = $1 AND key = $2 AND message_id = $3",
          [channel, key, messageId, now + IDEMPOTENCY_TTL_MS],
        );
      } catch (error) {
        throw asStateError(error);
      }
    },
    async release(channel, key, messageId) {
      try {
        // Only a pending key: a committed one answers for its message, whoever releases.
        await pool.query(
          "DELETE FROM webhook_channel.idempotency WHERE channel = $1 AND key = $2 AND message_id = $3 AND NOT committed",
          [channel, key, messageId],
        );
      } catch (error) {
        // The reservation stays, and would hold the key for its lease (the client's retries get
        // 409 `request_in_progress` meanwhile, for a request that was refused): it is released
        // as a failed reserve's is, once the database answers again.
        unsettled.add(channel, key, messageId);
        throw asStateError(error);
      }
    },
  };
}

/**
 * Deletes the idempotency keys past their time at `now` (pending past the lease, committed past
 * 24 h), in batches through the `expires_at` index; resolves with how many.
 */
export function pruneIdempotencyKeys(pool: pg.Pool, now: number, batch?: number): Promise<number> {
  return deleteInBatches(
    pool,
    `DELETE FROM webhook_channel.idempotency WHERE (channel, key) IN (
       SELECT channel, key FROM webhook_channel.idempotency WHERE expires_at <= $1 LIMIT $2 FOR UPDATE SKIP LOCKED)`,
    [now],
    batch,
  );
}

/**
 * The `fingerprint` column's value: the message it was taken for, then the request's
 * fingerprint. A replica of a version before fingerprints moves a key to another message without
 * writing this column: the value then names another message than the row's, and is ignored.
 */
export function storedFingerprint(messageId: string, fingerprint: string | undefined): string | null {
  return fingerprint === undefined ? null : `${messageId} ${fingerprint}`;
}

/** The fingerprint a row's `fingerprint` holds for its `message_id`; undefined when it holds none for it. */
function fingerprintOf(messageId: string, stored: string | null): string | undefined {
  const prefix = `${messageId} `;
  return stored?.startsWith(prefix) === true ? stored.slice(prefix.length) : undefined;
}
