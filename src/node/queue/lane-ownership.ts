import type { Job } from "../../core/lifecycle/job.js";
import type { LaneTicket } from "../../core/lifecycle/lane-store.js";

/**
 * Where a stored job of this replica's queue runs:
 * - `here`: this replica runs its conversation and the queue adds the job to its lane;
 * - `loaded`: this replica just took the conversation over (or found jobs it did not know of)
 *   and gave the queue the conversation's stored jobs, this one included, in acceptance order;
 * - `elsewhere`: another live replica runs the conversation and was told of the job.
 */
export type LanePlace = "here" | "loaded" | "elsewhere";

/**
 * Which conversations this process runs, and the ticket each of its runs writes under (see
 * `LaneTicket`). With several replicas (Postgres) one replica at a time runs a conversation, from
 * the claim that gave it the conversation's current epoch; alone (memory, SQLite) the process runs
 * every conversation it holds, under the epoch it took when it opened its state.
 */
export interface LaneOwnership {
  /** Called once `job` is stored: where it runs. A rejection leaves it stored for a sweep to find. */
  place(job: Job): Promise<LanePlace>;
  /** The ticket of lane `key`, or undefined when this process does not run it (any more). */
  ticket(key: string): LaneTicket | undefined;
  /**
   * The conversation `key` has no job left here: give it up once `removed` (the last job's
   * delete) settles, so that no other replica runs that job again.
   */
  released(key: string, channel: string, removed: Promise<void> | undefined): void;
  /** A write of lane `key` was refused (`lane_fenced`): another runner claimed it; forget it here. */
  lost(key: string): void;
  /**
   * The queue dropped what it held of lane `key`, which this process claimed again while a run of
   * the older claim went on (see `queue-runner.ts`): read its stored jobs again from the start.
   */
  reread(key: string, channel: string): void;
  /** False while this replica's lease is not known to be valid: no job may start. */
  mayRun(): boolean;
  /**
   * The store's write of `job` failed with `error` and its message was refused, but the write may
   * have been committed all the same (its answer came too late, or the connection broke at its
   * commit): look for the job, and run it if it is stored. A process whose failed writes are known
   * not to be stored (memory, SQLite), or an error that says the write was rolled back, does nothing.
   */
  unsure(job: Job, error: unknown): void;
}

/** The ownership of a process that runs every lane it holds, under one epoch (memory, SQLite). */
export function soleOwnership(epoch: number): LaneOwnership {
  return {
    place: () => Promise.resolve("here"),
    ticket: (key) => ({ key, epoch }),
    released: () => undefined,
    lost: () => undefined,
    reread: () => undefined,
    mayRun: () => true,
    unsure: () => undefined,
  };
}
