/**
 * The behaviour every {@link IdempotencyStore} shares, as one suite run against each
 * implementation (memory, SQLite, the Durable Object). Runtime-neutral: no `node:` or
 * `cloudflare:` imports, so it runs on Node and inside workerd alike.
 *
 * The suite follows the endpoint's flow: `reserve`, queue the message, then `commit` (or
 * `release` instead of queueing). A durable queue may remember the key with the message
 * itself (SQLite writes it in the job's transaction, and its `commit` only drops the pending
 * entry), so an implementation's runner supplies that queueing step.
 */
import { describe, expect, it } from "vitest";
import {
  IDEMPOTENCY_TTL_MS,
  type IdempotencyRecord,
  type IdempotencyStore,
  PENDING_LEASE_MS,
} from "../../../src/core/idempotency/idempotency-store.js";
import type { LaneStore } from "../../../src/core/lifecycle/lane-store.js";

/** An idempotency store under test, with how its message gets queued. */
export interface IdempotencyStoreSubject {
  readonly store: IdempotencyStore;
  /**
   * Queues the message of a reservation (between `reserve` and `commit`), as the endpoint
   * does at `now`. Omitted when queueing does not touch the store.
   */
  readonly queue?: (channel: string, key: string, record: IdempotencyRecord, now: number) => Promise<void>;
}

/**
 * The `queue` of a durable store whose key is committed with its message, by the job store's
 * `add` (SQLite, Postgres): it stores the reservation's message with its key.
 */
export function queuedThroughJobStore(jobs: Pick<LaneStore, "add">): NonNullable<IdempotencyStoreSubject["queue"]> {
  return async (channel, key, record, now) => {
    await jobs.add({
      message: {
        id: record.messageId,
        channel,
        receivedAt: now,
        idempotencyKey: key,
        ...(record.fingerprint === undefined ? {} : { idempotencyFingerprint: record.fingerprint }),
        message: { senderId: "u1", conversationId: record.conversationId, text: "hello" },
      },
      delivered: 0,
      attempts: 0,
    });
  };
}

/** A channel and key no other test uses, so durable state from other tests never interferes. */
const freshChannel = (): string => `channel-${crypto.randomUUID()}`;
const freshKey = (): string => `key-${crypto.randomUUID()}`;
// Each with a fingerprint of its own: every case below also checks that the store hands back
// the first request's fingerprint, pending and committed.
const freshRecord = (): IdempotencyRecord => ({
  messageId: crypto.randomUUID(),
  conversationId: `conversation-${crypto.randomUUID()}`,
  fingerprint: `fingerprint-${crypto.randomUUID()}`,
});

export function idempotencyStoreContract(
  name: string,
  make: () => Promise<IdempotencyStoreSubject> | IdempotencyStoreSubject,
): void {
  describe(`IdempotencyStore contract: ${name}`, () => {
    /** The endpoint's happy path at `now`: reserve, queue, commit. */
    const accept = async (
      subject: IdempotencyStoreSubject,
      channel: string,
      key: string,
      record: IdempotencyRecord,
      now: number,
    ): Promise<void> => {
      expect(await subject.store.reserve(channel, key, record, now)).toBeUndefined();
      await subject.queue?.(channel, key, record, now);
      await subject.store.commit(channel, key, record.messageId, now);
    };

    it("reserves a key never seen", async () => {
      const { store } = await make();
      expect(await store.reserve(freshChannel(), freshKey(), freshRecord(), Date.now())).toBeUndefined();
    });

    it("a pending key is reported as not committed, with the record that reserved it", async () => {
      const { store } = await make();
      const [channel, key, record, now] = [freshChannel(), freshKey(), freshRecord(), Date.now()];
      expect(await store.reserve(channel, key, record, now)).toBeUndefined();
      expect(await store.reserve(channel, key, freshRecord(), now + 1)).toEqual({ record, committed: false });
    });

    it("hands back a record kept without a fingerprint without one, pending and committed", async () => {
      const subject = await make();
      const [channel, key, now] = [freshChannel(), freshKey(), Date.now()];
      const { fingerprint: _, ...record } = freshRecord();
      expect(await subject.store.reserve(channel, key, record, now)).toBeUndefined();
      expect(await subject.store.reserve(channel, key, freshRecord(), now + 1)).toEqual({ record, committed: false });
      await subject.queue?.(channel, key, record, now);
      await subject.store.commit(channel, key, record.messageId, now);
      expect(await subject.store.reserve(channel, key, freshRecord(), now + 2)).toEqual({ record, committed: true });
    });

    it("answers a committed key with its record", async () => {
      const subject = await make();
      const [channel, key, record, now] = [freshChannel(), freshKey(), freshRecord(), Date.now()];
      await accept(subject, channel, key, record, now);
      expect(await subject.store.reserve(channel, key, freshRecord(), now + 1)).toEqual({ record, committed: true });
      expect(await subject.store.reserve(channel, key, freshRecord(), now + 2)).toEqual({ record, committed: true });
    });

    it("release frees a pending key", async () => {
      const { store } = await make();
      const [channel, key, first, now] = [freshChannel(), freshKey(), freshRecord(), Date.now()];
      expect(await store.reserve(channel, key, first, now)).toBeUndefined();
      await store.release(channel, key, first.messageId);
      const second = freshRecord();
      expect(await store.reserve(channel, key, second, now + 1)).toBeUndefined();
      expect(await store.reserve(channel, key, freshRecord(), now + 2)).toEqual({ record: second, committed: false });
    });

    it("release leaves a committed key: it answers for its message, whoever releases", async () => {
      const subject = await make();
      const [channel, key, record, now] = [freshChannel(), freshKey(), freshRecord(), Date.now()];
      await accept(subject, channel, key, record, now);
      await subject.store.release(channel, key, record.messageId);
      expect(await subject.store.reserve(channel, key, freshRecord(), now + 1)).toEqual({ record, committed: true });
    });

    it("release of another message leaves the key's reservation", async () => {
      const { store } = await make();
      const [channel, key, record, now] = [freshChannel(), freshKey(), freshRecord(), Date.now()];
      expect(await store.reserve(channel, key, record, now)).toBeUndefined();
      await store.release(channel, key, freshRecord().messageId);
      expect(await store.reserve(channel, key, freshRecord(), now + 1)).toEqual({ record, committed: false });
    });

    it("a request slower than its lease neither releases nor commits the key another request holds now", async () => {
      const subject = await make();
      const { store } = subject;
      const [channel, key, slow, now] = [freshChannel(), freshKey(), freshRecord(), Date.now()];
      expect(await store.reserve(channel, key, slow, now)).toBeUndefined();
      const retry = freshRecord();
      expect(await store.reserve(channel, key, retry, now + PENDING_LEASE_MS)).toBeUndefined();
      await store.release(channel, key, slow.messageId);
      await store.commit(channel, key, slow.messageId, now + PENDING_LEASE_MS + 1);
      expect(await store.reserve(channel, key, freshRecord(), now + PENDING_LEASE_MS + 2)).toEqual({
        record: retry,
        committed: false,
      });
      await subject.queue?.(channel, key, retry, now + PENDING_LEASE_MS + 3);
      await store.commit(channel, key, retry.messageId, now + PENDING_LEASE_MS + 3);
      expect(await store.reserve(channel, key, freshRecord(), now + PENDING_LEASE_MS + 4)).toEqual({
        record: retry,
        committed: true,
      });
    });

    it("a pending key is held for the lease, then can be reserved again", async () => {
      const { store } = await make();
      const [channel, key, record, now] = [freshChannel(), freshKey(), freshRecord(), Date.now()];
      expect(await store.reserve(channel, key, record, now)).toBeUndefined();
      expect(await store.reserve(channel, key, freshRecord(), now + PENDING_LEASE_MS - 1)).toEqual({
        record,
        committed: false,
      });
      const next = freshRecord();
      expect(await store.reserve(channel, key, next, now + PENDING_LEASE_MS)).toBeUndefined();
      expect(await store.reserve(channel, key, freshRecord(), now + PENDING_LEASE_MS + 1)).toEqual({
        record: next,
        committed: false,
      });
    });

    it("a committed key outlives the pending lease", async () => {
      const subject = await make();
      const [channel, key, record, now] = [freshChannel(), freshKey(), freshRecord(), Date.now()];
      await accept(subject, channel, key, record, now);
      expect(await subject.store.reserve(channel, key, freshRecord(), now + PENDING_LEASE_MS + 1)).toEqual({
        record,
        committed: true,
      });
    });

    it("a committed key is remembered for 24 h, then can be reserved again", async () => {
      const subject = await make();
      const [channel, key, record, now] = [freshChannel(), freshKey(), freshRecord(), Date.now()];
      await accept(subject, channel, key, record, now);
      expect(await subject.store.reserve(channel, key, freshRecord(), now + IDEMPOTENCY_TTL_MS - 1)).toEqual({
        record,
        committed: true,
      });
      const next = freshRecord();
      expect(await subject.store.reserve(channel, key, next, now + IDEMPOTENCY_TTL_MS)).toBeUndefined();
      expect(await subject.store.reserve(channel, key, freshRecord(), now + IDEMPOTENCY_TTL_MS + 1)).toEqual({
        record: next,
        committed: false,
      });
    });

    it("keeps keys of one channel apart", async () => {
      const subject = await make();
      const [channel, now] = [freshChannel(), Date.now()];
      const [committedKey, pendingKey, otherKey] = [freshKey(), freshKey(), freshKey()];
      const committed = freshRecord();
      const pending = freshRecord();
      await accept(subject, channel, committedKey, committed, now);
      expect(await subject.store.reserve(channel, pendingKey, pending, now)).toBeUndefined();
      expect(await subject.store.reserve(channel, otherKey, freshRecord(), now + 1)).toBeUndefined();
      expect(await subject.store.reserve(channel, committedKey, freshRecord(), now + 1)).toEqual({
        record: committed,
        committed: true,
      });
      expect(await subject.store.reserve(channel, pendingKey, freshRecord(), now + 1)).toEqual({
        record: pending,
        committed: false,
      });
    });

    it("keeps channels apart, whatever their names contain", async () => {
      const subject = await make();
      const [prefix, now] = [freshChannel(), Date.now()];
      // The same characters split differently between channel and key.
      const [channelA, keyA] = [`${prefix}:x`, "y"];
      const [channelB, keyB] = [prefix, "x:y"];
      const record = freshRecord();
      await accept(subject, channelA, keyA, record, now);
      expect(await subject.store.reserve(channelB, keyB, freshRecord(), now + 1)).toBeUndefined();
      expect(await subject.store.reserve(channelA, keyA, freshRecord(), now + 1)).toEqual({ record, committed: true });
    });

    it("releasing one channel's key leaves the same key of another channel reserved", async () => {
      const { store } = await make();
      const [channelA, channelB, key, now] = [freshChannel(), freshChannel(), freshKey(), Date.now()];
      const record = freshRecord();
      expect(await store.reserve(channelA, key, record, now)).toBeUndefined();
      expect(await store.reserve(channelB, key, freshRecord(), now)).toBeUndefined();
      await store.release(channelB, key, record.messageId);
      expect(await store.reserve(channelA, key, freshRecord(), now + 1)).toEqual({ record, committed: false });
    });

    it("one of concurrent reservations of a key wins, the others see it pending", async () => {
      const { store } = await make();
      const [channel, key, now] = [freshChannel(), freshKey(), Date.now()];
      const records = [freshRecord(), freshRecord(), freshRecord()];
      const answers = await Promise.all(records.map((record) => store.reserve(channel, key, record, now)));
      const winners = records.filter((_, index) => answers[index] === undefined);
      expect(winners).toHaveLength(1);
      for (const answer of answers) {
        if (answer !== undefined) expect(answer).toEqual({ record: winners[0], committed: false });
      }
    });
  });
}
