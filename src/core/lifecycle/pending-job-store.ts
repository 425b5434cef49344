import type { DeadLetter } from "../dead-letters/dead-letter.js";
import type { Job } from "./job.js";

/**
 * Where a stored job is found: its message id, and the conversation it belongs to (on
 * Workers, the conversation's Durable Object holds it).
 */
export interface JobKey {
  readonly id: string;
  readonly channel: string;
  readonly conversationId: string;
}

/** The key of a job. */
export function jobKey(job: Job): JobKey {
  const { message } = job;
  return { id: message.id, channel: message.channel, conversationId: message.message.conversationId };
}

/**
 * The store of pending jobs: accepted messages not yet finished, with their progress, so
 * that a restart (or a redelivery on Workers) resumes them without asking the brain again.
 * Memory, SQLite (`state_dir`) and a Durable Object implement it; one contract test suite
 * holds them all to the same behaviour. Methods may answer at once or with a promise.
 */
export interface PendingJobStore {
  /**
   * Stores a newly accepted job. A promise resolves once the job is durable; undefined
   * means it already is (or the store is not durable), which spares the hot path a promise.
   */
  add(job: Job): Promise<void> | undefined;
  /** Replaces a stored job with its progress (replies produced or delivered, an attempt failed). */
  update(job: Job): void | Promise<void>;
  /** The stored state of a job, or undefined when there is none. */
  get(key: JobKey): Job | undefined | Promise<Job | undefined>;
  /** Forgets a finished job. */
  remove(key: JobKey): void | Promise<void>;
  /** Replaces a job with its dead letter, kept until an operator deals with it. */
  bury(letter: DeadLetter): void | Promise<void>;
}
