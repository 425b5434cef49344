import type { Job, JobError } from "../lifecycle/job.js";

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
 * posted again with their ids, so their `webhook-id`s, and the brain is not asked again), its
 * attempts and last failure forgotten, so the retry policy starts afresh. A replay joins the
 * end of its conversation's lane as if accepted now, so its undelivered replies are marked to
 * take the conversation's next `sequence` numbers when they run (a receiver that drops a
 * `sequence` it has passed would otherwise drop every replay).
 */
export function replayableJob(letter: DeadLetter): Job {
  const { lastError: _lastError, stepStartedAt: _stepStartedAt, ...rest } = letter.job;
  return rest.replies === undefined ? { ...rest, attempts: 0 } : { ...rest, attempts: 0, renumber: true };
}
