import type { Job, JobError } from "./job.js";

/** A message or reply that exhausted its attempts, kept instead of dropped. */
export interface DeadLetter {
  readonly job: Job;
  readonly error: JobError;
  /** Failed attempts of the step that died. */
  readonly attempts: number;
  /** Epoch ms. */
  readonly diedAt: number;
}

/**
 * The job a replayed dead letter runs as: its progress kept (replies already rendered are
 * posted again, the brain is not asked again), its attempts and last failure forgotten, so
 * the retry policy starts afresh.
 */
export function replayableJob(letter: DeadLetter): Job {
  const { lastError: _lastError, stepStartedAt: _stepStartedAt, ...rest } = letter.job;
  return { ...rest, attempts: 0 };
}
