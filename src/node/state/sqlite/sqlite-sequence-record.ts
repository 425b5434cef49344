import { endNotesActivity } from "../../../core/conversation/idle-conversation.js";
import type { Job } from "../../../core/lifecycle/job.js";
import { createSequenceNotes } from "./sequence-notes.js";
import type { StateDb } from "./sqlite-state.js";

/** The highest sequence numbers of stored jobs, written with them. */
export interface SequenceRecord {
  /** Adds the highest number of `job`'s replies to `into`, unless the table has it already. */
  note(job: Job, into: Map<string, number>): void;
  /** Writes the numbers noted, in one statement; call inside the transaction that stores their jobs. */
  write(noted: ReadonlyMap<string, number>): void;
  /** The numbers noted are committed: later jobs with the same numbers need no write. */
  committed(noted: ReadonlyMap<string, number>): void;
  /** The conversations' rows were deleted (they were idle): their next numbers are written again. */
  forget(keys: Iterable<string>): void;
  /**
   * `job` of lane `key` ended (delivered or buried): a job that lasted long notes its end as the
   * conversation's activity, written by the next {@link write} (or by {@link stamp} at once).
   */
  ended(key: string, job: Job): void;
  /** Writes the activity noted by {@link ended} now; call inside a transaction of its own. */
  stamp(): void;
}

/**
 * Keeps `sequences` (each conversation's last reply number, which the lane store reads as
 * `lastSequence`) at or above every number a stored job holds, in the transaction that stores
 * the job. A job's progress after its replies
 * (a delivered reply, a failed attempt) carries numbers already written: the record skips
 * them without a statement, as far as it remembers (`maxConversations`; beyond that one
 * upsert too many, never one too few). Each write stamps `used_at`, which the forgetting of
 * idle conversations reads.
 */
export function createSequenceRecord(db: StateDb, maxConversations = 100_000): SequenceRecord {
  // One statement for the whole group; max() so that an older job's numbers never lower it.
  const upsert = db.prepare<[number, string]>(
    `INSERT INTO sequences (conversation, last, used_at) SELECT key, value, ? FROM json_each(?) WHERE true
     ON CONFLICT (conversation) DO UPDATE SET last = max(last, excluded.last), used_at = excluded.used_at`,
  );
  const touch = db.prepare<[number, string]>(
    "UPDATE sequences SET used_at = ? WHERE conversation IN (SELECT value FROM json_each(?))",
  );
  const notes = createSequenceNotes(maxConversations);
  // Lanes whose jobs ended long after they were numbered; kept until a commit wrote them.
  const ends = new Set<string>();
  let writing: string[] = [];
  const stamp = (): void => {
    writing = [...ends];
    if (writing.length > 0) touch.run(Date.now(), JSON.stringify(writing));
  };
  return {
    note: notes.note,
    write(noted) {
      if (noted.size > 0) upsert.run(Date.now(), JSON.stringify(Object.fromEntries(noted)));
      stamp();
    },
    committed(noted) {
      notes.committed(noted);
      for (const key of writing) ends.delete(key);
      writing = [];
    },
    forget: notes.forget,
    ended(key, job) {
      if (endNotesActivity(job.message.receivedAt, Date.now())) ends.add(key);
    },
    stamp,
  };
}
