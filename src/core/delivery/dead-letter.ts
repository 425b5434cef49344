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
