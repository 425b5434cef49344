import { conversationKey } from "../../../core/conversation/conversation-store.js";
import { type Job, lastTakenSequence } from "../../../core/lifecycle/job.js";

/**
 * What a durable store (SQLite, Postgres) must write of reply `sequence` numbers with the jobs
 * that carry them: each conversation's highest number, once. A job's progress after its replies
 * (a delivered reply, a failed attempt) carries numbers already written, which are skipped as far
 * as this remembers (`maxConversations`; beyond that one write too many, never one too few).
 */
export interface SequenceNotes {
  /** Adds the highest number of `job`'s replies to `into`, unless it was written already. */
  note(job: Job, into: Map<string, number>): void;
  /** The numbers noted are committed: later jobs with the same numbers need no write. */
  committed(noted: ReadonlyMap<string, number>): void;
  /** The conversations' counters were deleted: their next numbers are written again, whatever they are. */
  forget(keys: Iterable<string>): void;
}

/** The {@link SequenceNotes} of one store. */
export function createSequenceNotes(maxConversations = 100_000): SequenceNotes {
  const written = new Map<string, number>();
  return {
    note(job, into) {
      const highest = lastTakenSequence(job);
      if (highest === 0) return;
      const key = conversationKey(job.message.channel, job.message.message.conversationId);
      if ((written.get(key) ?? 0) >= highest || (into.get(key) ?? 0) >= highest) return;
      into.set(key, highest);
    },
    committed(noted) {
      for (const [key, highest] of noted) {
        written.delete(key);
        written.set(key, highest);
      }
      while (written.size > maxConversations) {
        const oldest = written.keys().next();
        if (oldest.done === true) break;
        written.delete(oldest.value);
      }
    },
    forget(keys) {
      for (const key of keys) written.delete(key);
    },
  };
}
