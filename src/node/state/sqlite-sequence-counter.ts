import type { SequenceCounter } from "../../core/conversation/sequence-counter.js";
import type { Job } from "../../core/lifecycle/job.js";
import { createSequenceNotes } from "./sequence-notes.js";
import type { StateDb } from "./sqlite-state.js";

/**
 * Reply sequence numbers with `state_dir`, handed out from memory: a reservation costs no
 * statement, except the read of a conversation's last number the first time this process
 * (or thread) numbers it. A reservation is not written by itself: the numbers become durable
 * with the job that carries them, whose update writes the conversation's highest number in
 * the same transaction ({@link createSequenceRecord}). A crash between the two loses only
 * numbers that were never posted, since replies are stored before the first is posted; they
 * are handed out again after the restart.
 *
 * A conversation's messages are answered one at a time, so its next reservation comes after
 * the job that took the last one stored its replies (or failed, and retries): a conversation
 * forgotten beyond `maxConversations` is read again from the table, which then has its number.
 */
export function createSqliteSequenceCounter(db: StateDb, maxConversations = 100_000): SequenceCounter {
  const select = db.prepare<[string], { last: number }>("SELECT last FROM sequences WHERE conversation = ?");
  const last = new Map<string, number>();
  return {
    reserve(key, count) {
      const known = last.get(key);
      const before = known ?? select.get(key)?.last ?? 0;
      // Most recently used last, so that the first key is the one to forget.
      if (known !== undefined) last.delete(key);
      last.set(key, before + count);
      if (last.size > maxConversations) {
        const oldest = last.keys().next();
        if (oldest.done !== true) last.delete(oldest.value);
      }
      return Promise.resolve(before + 1);
    },
  };
}

/** The highest sequence numbers of stored jobs, written with them. */
export interface SequenceRecord {
  /** Adds the highest number of `job`'s replies to `into`, unless the table has it already. */
  note(job: Job, into: Map<string, number>): void;
  /** Writes the numbers noted, in one statement; call inside the transaction that stores their jobs. */
  write(noted: ReadonlyMap<string, number>): void;
  /** The numbers noted are committed: later jobs with the same numbers need no write. */
  committed(noted: ReadonlyMap<string, number>): void;
}

/**
 * Keeps `sequences` at or above every number a stored job holds, which is what makes the
 * in-memory {@link createSqliteSequenceCounter} safe. A job's progress after its replies
 * (a delivered reply, a failed attempt) carries numbers already written: the record skips
 * them without a statement, as far as it remembers (`maxConversations`; beyond that one
 * upsert too many, never one too few).
 */
export function createSequenceRecord(db: StateDb, maxConversations = 100_000): SequenceRecord {
  // One statement for the whole group; max() so that an older job's numbers never lower it.
  const upsert = db.prepare<[string]>(
    `INSERT INTO sequences (conversation, last) SELECT key, value FROM json_each(?) WHERE true
     ON CONFLICT (conversation) DO UPDATE SET last = max(last, excluded.last)`,
  );
  const notes = createSequenceNotes(maxConversations);
  return {
    note: notes.note,
    write(noted) {
      if (noted.size > 0) upsert.run(JSON.stringify(Object.fromEntries(noted)));
    },
    committed: notes.committed,
  };
}
