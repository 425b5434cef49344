import type { QueuedMessage } from "../message/inbound-message.js";

/** A reply that the brain produced, rendered once so every attempt sends identical bytes. */
export interface PendingReply {
  /** Reply id, the `webhook-id` of every attempt. */
  readonly id: string;
  /** 1, 2, 3… within the conversation. */
  readonly sequence: number;
  /** The JSON body POSTed to `outbound_url`. */
  readonly body: string;
}

/** Why the last attempt failed, as kept with a job and a dead letter. */
export interface JobError {
  readonly code: string;
  readonly message: string;
  readonly retryable: boolean;
  /** The upstream HTTP status, when there was one (undefined: none; JSON leaves it out). */
  readonly status?: number | undefined;
  /** What the upstream said, in its own words (see `ChannelError.upstreamMessage`): shown with a dead letter only. */
  readonly detail?: string | undefined;
}

/**
 * The state of one accepted message on its way out: plain JSON, so a queue can persist it
 * and resume after a restart without asking the brain again for replies it already gave.
 */
export interface Job {
  readonly message: QueuedMessage;
  /** Set once the brain answered; delivered in order. */
  readonly replies?: readonly PendingReply[];
  /** How many of `replies` were delivered. */
  readonly delivered: number;
  /** Failed attempts of the current step (the brain call, or the next reply). */
  readonly attempts: number;
  /** Epoch ms of the current step's first attempt, for `max_age_ms`. */
  readonly stepStartedAt?: number;
  readonly lastError?: JobError;
  /**
   * Set on a replayed job whose replies were rendered before it died: before the next one is
   * posted, its undelivered replies take the conversation's next `sequence` numbers, since a
   * replay joins the end of its lane and its replies come after those delivered meanwhile.
   */
  readonly renumber?: boolean;
}

/**
 * What one run of a job came to, as far as the job itself decides. `answered` says that the
 * receiver answered the run's last reply POST (for the receiver circuit); a run that posted
 * nothing leaves it out.
 */
export type VerdictOutcome =
  | { readonly kind: "done"; readonly job: Job; readonly answered?: true }
  | { readonly kind: "retry"; readonly job: Job; readonly delayMs: number; readonly answered?: true }
  | {
      readonly kind: "dead";
      readonly job: Job;
      readonly error: JobError;
      /** Why it was given up on (not retryable, attempts exhausted, too old), for the log. */
      readonly reason?: string;
      readonly answered?: true;
    };

/**
 * What one run of a job came to:
 * - a {@link VerdictOutcome};
 * - `wait`: its receiver is down, so its replies wait (spending no attempt) until the receiver
 *   is up again, or until `until` (epoch ms), its `max_age_ms`, when the run that follows
 *   makes it a dead letter;
 * - `unanswered`: a reply POST got no answer (no connection, a timeout, 5xx, 408, 425, 429).
 *   The receiver circuit decides: while the receiver stays up, `verdict` (the attempt counted,
 *   as for any failure); once it is down, `wait` with `job` (the attempt not counted).
 *   `answeredBefore`: an earlier reply POST of the same run was answered, which the circuit
 *   counts first;
 * - `fenced`: the lane refused a write of the run (`lane_fenced`): another runner claimed the
 *   conversation, so the run stopped, posting nothing more, and nothing of it is settled here.
 */
export type JobOutcome =
  | VerdictOutcome
  | { readonly kind: "wait"; readonly job: Job; readonly until: number }
  | { readonly kind: "fenced"; readonly job: Job }
  | {
      readonly kind: "unanswered";
      readonly job: Job;
      readonly until: number;
      readonly retryAfterMs?: number | undefined;
      readonly verdict: Exclude<VerdictOutcome, { kind: "done" }>;
      readonly answeredBefore?: true;
    };

/** A new job for an accepted message. */
export function newJob(message: QueuedMessage): Job {
  return { message, delivered: 0, attempts: 0 };
}

/**
 * The number of its conversation a job took last: its last reply's `sequence` (0: none). Replies
 * are numbered in order; a replay numbers its undelivered ones anew after those delivered before,
 * whose older numbers (of a conversation forgotten since) a counter must not take back up.
 */
export function lastTakenSequence(job: Job): number {
  return job.replies?.at(-1)?.sequence ?? 0;
}
