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
  /** The upstream HTTP status, when there was one. */
  readonly status?: number;
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

/** What one run of a job came to. */
export type JobOutcome =
  | { readonly kind: "done"; readonly job: Job }
  | { readonly kind: "retry"; readonly job: Job; readonly delayMs: number }
  | {
      readonly kind: "dead";
      readonly job: Job;
      readonly error: JobError;
      /** Why it was given up on (not retryable, attempts exhausted, too old), for the log. */
      readonly reason?: string;
    };

/** A new job for an accepted message. */
export function newJob(message: QueuedMessage): Job {
  return { message, delivered: 0, attempts: 0 };
}
