import type { Job } from "../../core/lifecycle/job.js";

/**
 * Where a stored job of this replica's queue runs:
 * - `here`: this replica runs its conversation and the queue adds the job to its lane;
 * - `loaded`: this replica just took the conversation over (or found jobs it did not know of)
 *   and gave the queue the conversation's stored jobs, this one included, in acceptance order;
 * - `elsewhere`: another live replica runs the conversation and was told of the job.
 */
export type LanePlace = "here" | "loaded" | "elsewhere";

/**
 * Which conversations this process runs when several replicas share the state (Postgres):
 * one replica at a time runs a conversation, so its replies keep their order. Without it (memory,
 * SQLite) the job queue runs every conversation it holds.
 */
export interface LaneOwnership {
  /** Called once `job` is stored: where it runs. A rejection leaves it stored for a sweep to find. */
  place(job: Job): Promise<LanePlace>;
  /**
   * The conversation `key` has no job left here: give it up once `removed` (the last job's
   * delete) settles, so that no other replica runs that job again.
   */
  released(key: string, channel: string, removed: Promise<void> | undefined): void;
  /** False while this replica's lease is not known to be valid: no job may start. */
  mayRun(): boolean;
}
