import type pg from "pg";
import type { SequenceCounter } from "../../../core/conversation/sequence-counter.js";
import type { Job } from "../../../core/lifecycle/job.js";
import { createSequenceNotes } from "../sequence-notes.js";
import { asStateError } from "./postgres-state-error.js";

/** The Postgres sequence counter, which the replica coordination tells what it no longer numbers. */
export interface PostgresSequenceCounter extends SequenceCounter {
  /**
   * Forgets what this replica knows of a conversation's numbers: it took the conversation over
   * or gave it up, so another replica may have numbered it meanwhile, and the next reservation
   * reads `sequences` again.
   */
  forget(conversation: string): void;
  /**
   * Sets a conversation's last number as read along with a claim of it (this replica just took
   * it over), which spares the read of the first reservation.
   */
  prime(conversation: string, last: number): void;
}

/**
 * Reply sequence numbers with `postgres_url_env`, handed out from memory: a reservation costs
 * no statement, except the read of a conversation's last number the first time this replica
 * numbers it (or after {@link PostgresSequenceCounter.forget}). A reservation is not written by
 * itself: the numbers become durable with the job update that carries them, which writes the
 * conversation's highest number in the same statement ({@link createPostgresSequenceRecord}),
 * and replies are stored before the first is posted, so a crash in between loses only numbers
 * nobody saw. Gapless while one replica at a time numbers a conversation, which the replicas'
 * lane leases ensure (a conversation's messages are answered one at a time, on its owner).
 */
export function createPostgresSequenceCounter(pool: pg.Pool, maxConversations = 100_000): PostgresSequenceCounter {
  const last = new Map<string, number>();
  // One read per conversation however many reservations wait for it.
  const reads = new Map<string, Promise<number>>();

  const read = async (key: string): Promise<number> => {
    try {
      const result = await pool.query<{ last: string }>(
        "SELECT last FROM webhook_channel.sequences WHERE conversation = $1",
        [key],
      );
      return Number(result.rows[0]?.last ?? 0);
    } catch (error) {
      throw asStateError(error);
    }
  };

  const known = async (key: string): Promise<number> => {
    const cached = last.get(key);
    if (cached !== undefined) return cached;
    let reading = reads.get(key);
    if (reading === undefined) {
      reading = read(key);
      reads.set(key, reading);
    }
    try {
      const value = await reading;
      // The first waiter to wake sets it; the others find what it (and its reservation) left.
      return last.get(key) ?? value;
    } finally {
      if (reads.get(key) === reading) reads.delete(key);
    }
  };

  return {
    async reserve(key, count) {
      const before = await known(key);
      // Most recently used last, so that the first key is the one to forget.
      last.delete(key);
      last.set(key, before + count);
      if (last.size > maxConversations) {
        const oldest = last.keys().next();
        if (oldest.done !== true) last.delete(oldest.value);
      }
      return before + 1;
    },
    forget(conversation) {
      last.delete(conversation);
      reads.delete(conversation);
    },
    prime(conversation, value) {
      reads.delete(conversation);
      last.delete(conversation);
      last.set(conversation, value);
      if (last.size > maxConversations) {
        const oldest = last.keys().next();
        if (oldest.done !== true) last.delete(oldest.value);
      }
    },
  };
}

/** The highest sequence numbers of stored jobs, written in the statement that stores them. */
export interface PostgresSequenceRecord {
  /** Adds the highest number of `job`'s replies to `into`, unless this replica wrote it already. */
  note(job: Job, into: Map<string, number>): void;
  /** The numbers noted are committed: later jobs with the same numbers need no write. */
  committed(noted: ReadonlyMap<string, number>): void;
}

/**
 * Keeps `sequences` at or above every number a stored job holds (the statement writes
 * `GREATEST`, so an older job never lowers it, whichever replica wrote last). A job's progress
 * after its replies carries numbers already written: the record skips them, as far as it
 * remembers (`maxConversations`; beyond that one upsert too many, never one too few).
 */
export function createPostgresSequenceRecord(maxConversations = 100_000): PostgresSequenceRecord {
  return createSequenceNotes(maxConversations);
}
