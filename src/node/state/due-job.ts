import type { Job } from "../../core/lifecycle/job.js";

/**
 * A job as a durable lane store's row holds it: one postponed for a retry carries the time the
 * retry is due (a receiver's `Retry-After`, a long backoff), so that the process that loads it
 * next (a restart, a replica taking its conversation over) runs it then rather than at once.
 * Kept in the row's JSON: a later write of the job (progress, a hold) leaves it out.
 */
export type DueJob = Job & { readonly dueAt?: number };

/** The row's job for a postponement until `dueAt`. */
export function postponedUntil(job: Job, dueAt: number): DueJob {
  return { ...job, dueAt };
}

/** A row's job, and its retry's due time when it waits for one. */
export function readDueJob(text: string): { readonly job: Job; readonly dueAt: number | undefined } {
  const { dueAt, ...job } = JSON.parse(text) as DueJob;
  return { job, dueAt: typeof dueAt === "number" && Number.isFinite(dueAt) ? dueAt : undefined };
}
