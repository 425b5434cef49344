import type pg from "pg";
import { PENDING_LEASE_MS } from "../../../core/idempotency/idempotency-store.js";

/** How long after a failed reserve its reservation is released again, and again after each try. */
export const UNSETTLED_RETRY_MS = 1_000;

/**
 * Reservations kept for release at most, all tried by each statement; past this the oldest is
 * dropped, and holds its key for its lease if it committed.
 */
const MAX_UNSETTLED = 10_000;

/**
 * Deletes the pending reservations of these messages, each only while it is still pending and
 * still names its message: a later request's reservation of the key is left alone.
 */
const RELEASE = `DELETE FROM webhook_channel.idempotency AS i
USING unnest($1::text[], $2::text[], $3::text[]) AS u(channel, key, message_id)
WHERE i.channel = u.channel AND i.key = u.key AND i.message_id = u.message_id AND NOT i.committed
RETURNING i.channel, i.key, i.message_id`;

/** Reservations whose reserve failed without saying whether it committed, or whose release failed. */
export interface UnsettledReservations {
  /**
   * The reserve of `messageId` under `key` failed and may have committed, or its release failed:
   * release it once it shows.
   */
  add(channel: string, key: string, messageId: string): void;
  /** Reservations still waiting for their release. */
  readonly size: number;
  /** Release statements run so far. */
  readonly tries: number;
}

interface Unsettled {
  readonly channel: string;
  readonly key: string;
  readonly messageId: string;
  /** Wall-clock ms after which the reservation, if it exists, has expired by itself. */
  readonly giveUpAt: number;
}

/**
 * A reserve that fails without the server's word that it rolled back (no answer in time, a
 * connection lost, a commit held up by a synchronous standby that is gone) may have committed
 * all the same, once the server gets to it. Its request was answered 503 and its message never
 * queued, but the reservation would hold the key for its lease ({@link PENDING_LEASE_MS}): the
 * client's retry would get 409 `request_in_progress` until then, for a request no longer in
 * progress. Each such reservation is released by its message id, so only its own,
 * {@link UNSETTLED_RETRY_MS} after the failure and as long after each try ends (one statement for
 * all of them, one at a time), until the release finds it or its lease has run out. A release that finds nothing is not proof: the reserve may still
 * be on its way, so it is tried again until then. The list is this process's: a replica that
 * stops leaves what it held to the leases. Once the pool is ended, the tries end too.
 */
export function createUnsettledReservations(
  pool: pg.Pool,
  leaseMs: number = PENDING_LEASE_MS,
  retryMs: number = UNSETTLED_RETRY_MS,
): UnsettledReservations {
  const unsettled = new Map<string, Unsettled>();
  let timer: ReturnType<typeof setTimeout> | undefined;
  let running = false;
  let tries = 0;

  const schedule = (): void => {
    if (timer !== undefined || running || unsettled.size === 0) return;
    timer = setTimeout(() => {
      timer = undefined;
      void releaseSome();
    }, retryMs);
    // A stop does not wait for it: a reservation left behind expires with its lease.
    timer.unref();
  };

  const releaseSome = async (): Promise<void> => {
    running = true;
    const now = Date.now();
    for (const [id, entry] of unsettled) if (entry.giveUpAt <= now || pool.ending) unsettled.delete(id);
    const batch = [...unsettled.values()];
    try {
      if (batch.length > 0) {
        tries += 1;
        const released = await pool.query<{ channel: string; key: string; message_id: string }>(RELEASE, [
          batch.map((entry) => entry.channel),
          batch.map((entry) => entry.key),
          batch.map((entry) => entry.messageId),
        ]);
        for (const row of released.rows) unsettled.delete(idOf(row.channel, row.key, row.message_id));
      }
    } catch {
      // The database does not answer yet: the next try follows the pause.
    } finally {
      running = false;
      schedule();
    }
  };

  return {
    add(channel, key, messageId) {
      const oldest = unsettled.keys().next();
      if (unsettled.size >= MAX_UNSETTLED && oldest.done !== true) unsettled.delete(oldest.value);
      unsettled.set(idOf(channel, key, messageId), { channel, key, messageId, giveUpAt: Date.now() + leaseMs });
      schedule();
    },
    get size() {
      return unsettled.size;
    },
    get tries() {
      return tries;
    },
  };
}

function idOf(channel: string, key: string, messageId: string): string {
  return JSON.stringify([channel, key, messageId]);
}
