import type { DeadLetter } from "../core/dead-letter/dead-letter.js";
import type { Job } from "../core/delivery/job.js";

/**
 * Where the job queue records what happens to accepted messages. The memory journal keeps
 * nothing across restarts; the SQLite journal (with `state_dir`) keeps everything.
 */
export interface Journal {
  /** Makes a newly accepted job durable; `enqueue` answers only after this resolves. */
  accept(job: Job): Promise<void>;
  /** Records a job's progress (replies produced or delivered, a failed attempt). */
  progress(job: Job): void;
  /** Forgets a finished job. */
  finish(job: Job): void;
  /** Keeps a job that exhausted its attempts. */
  dead(letter: DeadLetter): void;
  /** Words for what happens to jobs still unfinished at shutdown. */
  readonly leftoverFate: "lost" | "kept";
}
