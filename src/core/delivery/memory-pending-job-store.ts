import type { DeadLetter } from "./dead-letter.js";
import type { Job } from "./job.js";
import type { PendingJobStore } from "./pending-job-store.js";

/** The in-memory store, which also shows the dead letters it keeps. */
export interface MemoryPendingJobStore extends PendingJobStore {
  /** The most recent dead letters, oldest first. */
  readonly deadLetters: readonly DeadLetter[];
  /** Jobs stored now. */
  readonly size: number;
}

/**
 * Pending jobs in a Map, and the last `keepDeadLetters` dead letters: nothing survives the
 * process, which is what running without `state_dir` means.
 */
export function createMemoryPendingJobStore(keepDeadLetters = 1_000): MemoryPendingJobStore {
  const jobs = new Map<string, Job>();
  const deadLetters: DeadLetter[] = [];
  return {
    deadLetters,
    get size() {
      return jobs.size;
    },
    add(job) {
      jobs.set(job.message.id, job);
      return undefined;
    },
    update(job) {
      jobs.set(job.message.id, job);
    },
    get: (key) => jobs.get(key.id),
    remove(key) {
      jobs.delete(key.id);
    },
    bury(letter) {
      jobs.delete(letter.job.message.id);
      deadLetters.push(letter);
      if (deadLetters.length > keepDeadLetters) deadLetters.shift();
    },
  };
}
