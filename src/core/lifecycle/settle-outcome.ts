import type { DeadLetter } from "../dead-letters/dead-letter.js";
import type { LogFields, LogLevel } from "../log/logger.js";
import { deadLetterFields } from "./dead-letter-fields.js";
import type { Job, JobOutcome } from "./job.js";

/** A line a runtime writes once it has stored a settlement. */
export interface SettlementLog {
  readonly level: LogLevel;
  readonly msg: string;
  readonly fields: LogFields;
}

/**
 * What becomes of a job after one run, as operations on its conversation's lane:
 * - `finish`: it leaves the lane and its storage; the next job of the lane may run;
 * - `postpone`: it stays first in its lane with its progress, and runs again at `dueAt`;
 *   every later job of the conversation waits behind it;
 * - `hold`: it stays first in its lane, as `postpone` does, but waits for its receiver: it runs
 *   again when the receiver is up (the runtime wakes it), or at `until` at the latest;
 * - `bury`: it leaves the lane, and `letter` is kept where dead letters are.
 */
export type Settlement =
  | { readonly kind: "finish"; readonly job: Job }
  | { readonly kind: "postpone"; readonly job: Job; readonly dueAt: number }
  | { readonly kind: "hold"; readonly job: Job; readonly until: number }
  | { readonly kind: "bury"; readonly job: Job; readonly letter: DeadLetter; readonly log: SettlementLog };

/** What settling needs besides the outcome. */
export interface SettleContext {
  /** Epoch ms of the settling: a retry's due time and a letter's `diedAt` count from it. */
  readonly now: number;
  /** What the dead letter's log line says about replaying it (a command, or where it is kept). */
  readonly replayHint: (id: string) => string;
}

/**
 * Wait before a job whose settlement could not be stored runs again: it stays as it was
 * stored, so nothing is lost, and the lane moves on once storage answers again.
 */
export const UNSTORED_RETRY_MS = 1_000;

/**
 * Turns a run's outcome into what the runtime must do with the job. Pure: the lane runner
 * (`runHead`, on every runtime) calls it and writes the settlement to the lane store; no
 * backend or runtime decides on its own. A `fenced` run is settled by nobody (see `runHead`).
 * An `unanswered` outcome that no receiver circuit ruled on (see `passCircuit`) is its verdict.
 */
export function settleOutcome(outcome: Exclude<JobOutcome, { kind: "fenced" }>, context: SettleContext): Settlement {
  switch (outcome.kind) {
    case "done":
      return { kind: "finish", job: outcome.job };
    case "wait":
      return { kind: "hold", job: outcome.job, until: outcome.until };
    case "unanswered":
      return settleOutcome(outcome.verdict, context);
    case "retry":
      return { kind: "postpone", job: outcome.job, dueAt: context.now + Math.max(0, outcome.delayMs) };
    case "dead": {
      const letter: DeadLetter = {
        job: outcome.job,
        error: outcome.error,
        attempts: outcome.job.attempts,
        diedAt: context.now,
      };
      return {
        kind: "bury",
        job: outcome.job,
        letter,
        log: {
          level: "error",
          msg: `dead letter: ${outcome.error.message}`,
          fields: deadLetterFields(letter, outcome.reason, context.replayHint(outcome.job.message.id)),
        },
      };
    }
  }
}

/**
 * The settlement of a job whose outcome could not be stored (a locked database): it runs
 * again after {@link UNSTORED_RETRY_MS} from the state it was stored in.
 */
export function unstoredSettlement(job: Job, now: number): Extract<Settlement, { kind: "postpone" }> {
  return { kind: "postpone", job, dueAt: now + UNSTORED_RETRY_MS };
}
