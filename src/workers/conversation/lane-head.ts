import type { Job } from "../../core/lifecycle/job.js";

/**
 * A job waits at least this long after its acceptance before it first runs. Cloudflare Queues
 * do not promise order, and concurrent consumer invocations may hand two messages of one
 * conversation over in the other order a few milliseconds apart: this lets the earlier one
 * arrive and go first. A message that reaches the consumer later than this does not wait.
 */
export const ORDER_HOLD_MS = 200;

/** How long a hand-over waits for its run: a quick one needs no alarm, a slow one never holds the consumer. */
export const HAND_OVER_WAIT_MS = 250;

/** What became of a message handed over to the lane. */
export type HandOver = "queued" | "duplicate" | "missing";

/** The job at the head of the lane, the only one that may run. */
export interface LaneHead {
  readonly id: string;
  /** Undefined when the stored job cannot be read (it is then dropped, with a log line). */
  readonly job: Job | undefined;
  /** Epoch ms before which it must not run. */
  readonly nextAt: number;
  /** Set when the job died and its letter still has to reach the dead-letter queue (JSON). */
  readonly letter: string | undefined;
}
