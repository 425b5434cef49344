/** What an `Idempotency-Key` remembers: the answer of the first accepted request. */
export interface IdempotencyRecord {
  readonly messageId: string;
  readonly conversationId: string;
  /**
   * The first request's fingerprint (`request-fingerprint.ts`), so that a key reused with another body is
   * refused; absent for a key stored by a version that kept none, which answers any body.
   */
  readonly fingerprint?: string;
}

/** A key's state: `committed` once its message is queued; pending while that is under way. */
export interface Reservation {
  readonly record: IdempotencyRecord;
  readonly committed: boolean;
}

/** How long an `Idempotency-Key` is remembered once its message was accepted: 24 h. */
export const IDEMPOTENCY_TTL_MS = 86_400_000;

/**
 * How long a pending reservation holds its key. A request that dies between reserving and
 * queueing leaves no key behind for longer than this.
 */
export const PENDING_LEASE_MS = 60_000;

/** Longest accepted `Idempotency-Key`. */
export const MAX_IDEMPOTENCY_KEY_LENGTH = 256;

/**
 * Remembers idempotency keys per channel, in two steps so that a key never answers for a
 * message that was not queued: `reserve` (atomic) holds the key as pending, `commit` marks
 * it once the message is queued, `release` drops it when queueing failed. `commit` and
 * `release` name the message they reserved for and touch the key only while it is still held
 * for that message: once a lease has run out, another request may hold the key, and a slow
 * request's commit or release must leave that reservation as it is.
 */
export interface IdempotencyStore {
  /** Returns the key's live reservation, or reserves it for `record` (pending) and returns undefined. */
  reserve(channel: string, key: string, record: IdempotencyRecord, now: number): Promise<Reservation | undefined>;
  /** `messageId`, which the key was reserved for, was queued: keep the key for {@link IDEMPOTENCY_TTL_MS} from `now`. */
  commit(channel: string, key: string, messageId: string, now: number): Promise<void>;
  /**
   * Forgets the key's pending reservation for `messageId`, which was not queued; a committed
   * key, and a reservation for another message, stay.
   */
  release(channel: string, key: string, messageId: string): Promise<void>;
}

/** The store key of one channel's idempotency key; unambiguous whatever the names contain. */
export function idempotencyId(channel: string, key: string): string {
  return `${channel.length}:${channel}:${key}`;
}
