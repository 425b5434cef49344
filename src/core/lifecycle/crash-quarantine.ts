import type { Logger } from "../log/logger.js";
import type { Job, JobOutcome } from "./job.js";

/** Unexpected failures in a row after which a job is dead-lettered. */
export const MAX_UNEXPECTED_FAILURES = 5;

/** What to do with a job whose run failed unexpectedly. */
export type CrashVerdict =
  | { readonly kind: "retry"; readonly failures: number; readonly delayMs: number }
  | { readonly kind: "dead"; readonly failures: number };

/**
 * The quarantine of jobs whose runs failed unexpectedly. `run()` never rejects by contract,
 * but the delivery thread can stop mid-run (a crash), and every run it held rejects. Such
 * jobs are suspects: they run one at a time, so a message that crashes the thread again
 * takes no other job down with it; each failure in a row doubles its wait, and the
 * {@link MAX_UNEXPECTED_FAILURES}th makes it a dead letter rather than loop for ever. An
 * ordinary outcome clears a suspect.
 */
export class CrashQuarantine {
  private readonly failures = new Map<string, number>();
  private suspectRunning = false;

  /** True when the job failed unexpectedly before and has not had an ordinary outcome since. */
  isSuspect(messageId: string): boolean {
    return this.failures.size > 0 && this.failures.has(messageId);
  }

  /** False while another suspect runs: suspects run one at a time. */
  mayStart(suspect: boolean): boolean {
    return !(suspect && this.suspectRunning);
  }

  /** A job starts; a suspect takes the one suspect slot. */
  started(suspect: boolean): void {
    if (suspect) this.suspectRunning = true;
  }

  /** A job's run is over, whatever its outcome. */
  ended(suspect: boolean): void {
    if (suspect) this.suspectRunning = false;
  }

  /** The job had an ordinary outcome: it is no longer a suspect. */
  cleared(messageId: string): void {
    this.failures.delete(messageId);
  }

  /**
   * The outcome of a run of `job` that rejected with `detail` (the delivery thread stopped
   * mid-run). A stop of the service (`stopping`) is nobody's fault: the job is retried at once,
   * and not counted; anything else counts as an unexpected failure.
   */
  outcome(job: Job, detail: string, stopping: boolean, logger: Logger): JobOutcome {
    const id = job.message.id;
    if (stopping) {
      logger.warn(`job stopped with the delivery thread: ${detail}`, { message_id: id });
      return { kind: "retry", job, delayMs: 0 };
    }
    const verdict = this.failed(id);
    if (verdict.kind === "dead") {
      const message = `failed unexpectedly ${verdict.failures} times in a row: ${detail}`;
      return { kind: "dead", job, error: { code: "internal_error", message, retryable: false } };
    }
    logger.error(`job failed unexpectedly: ${detail}`, { message_id: id, failures: verdict.failures });
    return { kind: "retry", job, delayMs: verdict.delayMs };
  }

  /** Counts an unexpected failure and says whether to try again (after how long) or give up. */
  failed(messageId: string): CrashVerdict {
    const failures = (this.failures.get(messageId) ?? 0) + 1;
    if (failures >= MAX_UNEXPECTED_FAILURES) {
      this.failures.delete(messageId);
      return { kind: "dead", failures };
    }
    this.failures.set(messageId, failures);
    return { kind: "retry", failures, delayMs: 1_000 * 2 ** (failures - 1) };
  }
}
