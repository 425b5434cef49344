import type { Job } from "../../core/lifecycle/job.js";
import type { MeteredSql } from "../metered-sql.js";
import { readStoredJob } from "../queue-body.js";
import { JobPieces } from "./job-pieces.js";

/** A parked job as found: `job` is undefined when what is stored cannot be read. */
export interface ParkedJob {
  readonly job: Job | undefined;
}

/**
 * The `jobs` table of a conversation, and its only writer: jobs parked by message id where a
 * queue message cannot carry them. A message too large for the inbound queue waits here until
 * the inbound consumer hands it over (the lane then takes it, see `ConversationLane.add`); a
 * dead letter too large for the dead-letter queue waits here until that queue's consumer reads
 * it (the pending-job store's `get`, then `remove`).
 */
export class ParkedJobs {
  /** Where a job too long for one value is kept: a dead letter's, with long replies. */
  private readonly pieces: JobPieces;

  constructor(private readonly sql: MeteredSql) {
    this.pieces = new JobPieces(sql, "jobs");
  }

  /** Parks a job, replacing an earlier state of it. */
  park(job: Job): void {
    this.sql.run("INSERT OR REPLACE INTO jobs (id, job) VALUES (?, ?)", job.message.id, this.pieces.store(job));
  }

  /** The job parked under a message id, or undefined when there is none. */
  find(id: string): ParkedJob | undefined {
    const row = this.sql.first<{ job: string }>("SELECT job FROM jobs WHERE id = ?", id);
    return row === undefined ? undefined : { job: readStoredJob(this.pieces.read(id, row.job)) };
  }

  /** Forgets a parked job (answered, dead-lettered, or taken into the lane). */
  forget(id: string): void {
    this.sql.run("DELETE FROM jobs WHERE id = ?", id);
    this.pieces.forget(id);
  }

  /** Forgets every parked job (the conversation expired). */
  clear(): void {
    this.sql.run("DELETE FROM jobs");
    this.pieces.clear();
  }
}
