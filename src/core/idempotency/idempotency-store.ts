/** What an `Idempotency-Key` remembers: the answer of the first accepted request. */
export interface IdempotencyRecord {
  readonly messageId: string;
  readonly conversationId: string;
}

/** How long an `Idempotency-Key` is remembered: 24 h. */
export const IDEMPOTENCY_TTL_MS = 86_400_000;

/** Longest accepted `Idempotency-Key`. */
export const MAX_IDEMPOTENCY_KEY_LENGTH = 256;

/**
 * Remembers idempotency keys per channel. `reserve` is atomic: it returns the earlier record
 * when the key was seen within the TTL, otherwise stores `record` and returns undefined.
 */
export interface IdempotencyStore {
  reserve(channel: string, key: string, record: IdempotencyRecord, now: number): Promise<IdempotencyRecord | undefined>;
  /** Forgets a reservation whose message was not accepted after all. */
  release(channel: string, key: string): Promise<void>;
}
