import type { DeadLetter } from "../core/dead-letter/dead-letter.js";
import type { Job } from "../core/delivery/job.js";

/**
 * Where the job queue records what happens to accepted messages. The memory journal keeps
 * nothing across restarts; the SQLite journal (with `state_dir`) keeps everything.
 */
export interface Journal {
  /**
   * Makes a newly accepted job durable; `enqueue` answers only after the returned promise
   * resolves. Undefined means there is nothing to wait for (the memory journal), which spares
   * the hot path a promise per message.
   */
  accept(job: Job): Promise<void> | undefined;
  /** Records a job's progress (replies produced or delivered, a failed attempt). */
  progress(job: Job): void;
  /** Forgets a finished job. */
  finish(job: Job): void;
  /** Keeps a job that exhausted its attempts. */
  dead(letter: DeadLetter): void;
  /** Words for what happens to jobs still unfinished at shutdown. */
  readonly leftoverFate: "lost" | "kept";
}
