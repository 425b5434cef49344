import { isPausingError, pauseMsFor } from "../brain/limits/brain-pause.js";
import type { ChannelError } from "../channel-error.js";
import type { Job, JobError } from "../lifecycle/job.js";
import { nextDelayMs, type RetryPolicy } from "../lifecycle/retry-policy.js";

/** Why a job is given up on. */
export type DeadReason = "not_retryable" | "attempts_exhausted" | "max_age";

/** What one failed attempt of a job comes to. `job` is the job with the failure counted. */
export type FailureVerdict =
  | { readonly kind: "retry"; readonly job: Job; readonly delayMs: number }
  | { readonly kind: "dead"; readonly job: Job; readonly error: JobError; readonly reason: DeadReason };

/** Everything {@link classifyFailure} decides from; nothing else is read. */
export interface FailedAttempt {
  /** The job as it stood when the attempt began. */
  readonly job: Job;
  readonly error: ChannelError;
  /** Epoch ms when the failed attempt began (the step's start, if this was its first). */
  readonly attemptAt: number;
  /** Epoch ms now. */
  readonly now: number;
  readonly policy: RetryPolicy;
  /** A uniform draw in [0, 1) for the backoff's full jitter. */
  readonly jitter: number;
}

/**
 * Decides what a failed attempt comes to: another attempt after a delay (the backoff, raised
 * to the upstream's `Retry-After` and capped at `maxDelayMs`), or a dead letter and why.
 * A brain that says to wait (a 429 or 503, which pauses it for everyone) or a call refused
 * because it is paused (the brain was not asked) is no attempt: the job waits for the pause's
 * end, as replies wait for a receiver that is down, and only `maxAgeMs` ends that wait. Pure:
 * the same input gives the same verdict, so it is tested as a table.
 */
export function classifyFailure(attempt: FailedAttempt): FailureVerdict {
  const { error, policy } = attempt;
  if (error.pausedUntil !== undefined) return waitForPause(attempt, error.pausedUntil);
  // Asked of `attempt.error`: the guard would narrow `error` itself to never past this branch.
  if (isPausingError(attempt.error)) {
    // At least the pause the brain's limiter takes from this answer (a longer one, in a row of
    // pauses, refuses the next call, which waits again without spending an attempt).
    return waitForPause(attempt, attempt.now + pauseMsFor(attempt.error, 1));
  }
  const attempts = attempt.job.attempts + 1;
  const stepStartedAt = attempt.job.stepStartedAt ?? attempt.attemptAt;
  const lastError = jobErrorOf(error);
  const job: Job = { ...attempt.job, attempts, stepStartedAt, lastError };
  const delayMs = nextDelayMs(attempts, policy, () => attempt.jitter, error.retryAfterMs);
  const reason: DeadReason | undefined = !error.retryable
    ? "not_retryable"
    : attempts >= policy.maxAttempts
      ? "attempts_exhausted"
      : attempt.now + delayMs - stepStartedAt > policy.maxAgeMs
        ? "max_age"
        : undefined;
  if (reason === undefined) return { kind: "retry", job, delayMs };
  return { kind: "dead", job, error: lastError, reason };
}

/** The verdict on a call its paused brain refused: no attempt counted, a wait for the pause's end. */
function waitForPause(attempt: FailedAttempt, pausedUntil: number): FailureVerdict {
  const stepStartedAt = attempt.job.stepStartedAt ?? attempt.attemptAt;
  const lastError = jobErrorOf(attempt.error);
  const job: Job = { ...attempt.job, stepStartedAt, lastError };
  const delayMs = Math.max(0, pausedUntil - attempt.now);
  if (attempt.now + delayMs - stepStartedAt > attempt.policy.maxAgeMs) {
    return { kind: "dead", job, error: lastError, reason: "max_age" };
  }
  return { kind: "retry", job, delayMs };
}

/** A failure as kept with its job and its dead letter. */
export function jobErrorOf(error: ChannelError): JobError {
  return {
    code: error.code,
    message: error.message,
    retryable: error.retryable,
    ...(error.upstreamStatus === undefined ? {} : { status: error.upstreamStatus }),
    ...(error.upstreamMessage === undefined ? {} : { detail: error.upstreamMessage }),
  };
}
