import type { ErrorCode } from "../../core/channel-error.js";
import type { Config } from "../../core/config/config-schema.js";
import type { Job, JobOutcome } from "../../core/lifecycle/job.js";
import type { Answered } from "../../core/lifecycle/lane-store.js";
import type { LogLevel } from "../../core/log/logger.js";
import type { OperatorEventInput } from "../../core/operator-events/operator-event.js";
import type { Admission } from "../../core/receiver/receiver-circuit.js";
import type { RunEvent } from "../../core/timeline/timeline-event.js";
import type { ThreadBrainPause } from "./thread-brain-pauses.js";
import type { MetricEvent } from "./thread-metrics.js";

/** What the delivery thread is started with (its `workerData`). */
export interface DeliveryThreadData {
  readonly config: Config;
  /** The brains' pauses a thread that died had met: this one starts paused until their ends. */
  readonly pauses?: readonly ThreadBrainPause[];
}

/** A message from the main thread to the delivery thread. */
export type ToDeliveryThread =
  /** Run `job`, numbering new replies from `firstSequence`, posting as the receiver circuit's `admission` allows. */
  | {
      readonly kind: "run";
      readonly id: number;
      readonly job: Job;
      readonly firstSequence: number;
      readonly admission: Admission;
      /** The run's calls and POSTs come back with its outcome, for the message's timeline. */
      readonly record: boolean;
    }
  /**
   * The main thread has stored the progress of run `id` (or could not: `error`; `fenced` when the
   * lane refused it, and the run stops).
   */
  | {
      readonly kind: "progressed";
      readonly id: number;
      readonly error?: string;
      readonly fenced?: true;
      /** The receiver circuit went down meanwhile: the run holds its replies (`RunHooks.receiverDown`). */
      readonly receiverDown?: true;
    }
  /**
   * Rebuild the brains and channel routes from a reloaded configuration. `env` holds the value
   * of every variable that `config` names, resolved on the main thread (`*_FILE` included),
   * which the thread then prefers to its own environment.
   */
  | {
      readonly kind: "reload";
      readonly id: number;
      readonly config: Config;
      readonly env: Readonly<Record<string, string | undefined>>;
    }
  /** Finish the runs in hand, close the outbound connections and the state database, then end. */
  | { readonly kind: "close" };

/** A message from the delivery thread to the main thread. */
export type FromDeliveryThread =
  /** The consumer is built; runs may start. */
  | { readonly kind: "ready" }
  /** The consumer could not be built; the thread ends. */
  | { readonly kind: "failed"; readonly code: ErrorCode; readonly message: string }
  /**
   * A step of run `id` for the lane store (the brain's replies with `answered`, a delivered
   * reply). With `ack`, the run waits for `progressed` before it posts anything, as it would on
   * the main thread: with `state_dir`, replies are stored before they are sent.
   */
  | {
      readonly kind: "progress";
      readonly id: number;
      readonly job: Job;
      readonly answered?: Answered;
      readonly ack: boolean;
    }
  /** How run `id` ended, with what it did when it was asked to record (see `run`). */
  | {
      readonly kind: "outcome";
      readonly id: number;
      readonly outcome: JobOutcome;
      readonly events?: readonly RunEvent[];
    }
  /** Run `id` threw, which the consumer never does by contract; the queue tries the job again. */
  | { readonly kind: "rejected"; readonly id: number; readonly message: string }
  /**
   * A log line for the main thread's logger. Fields travel as JSON text, so a value that
   * cannot be copied between threads can never hold up the outcomes sent with it.
   */
  | { readonly kind: "log"; readonly level: LogLevel; readonly msg: string; readonly fields?: string }
  /** Reload `id` is in place: the next runs use the new routes. */
  | { readonly kind: "reloaded"; readonly id: number }
  /** The consumer's metric events of one turn, for the main thread's registry. */
  | { readonly kind: "metrics"; readonly events: readonly MetricEvent[] }
  /** An operator event raised on the thread (a brain paused or resumed), sent from the main thread. */
  | { readonly kind: "operator_event"; readonly event: OperatorEventInput }
  /** Reload `id` could not be built; the thread keeps the routes it had. */
  | { readonly kind: "reload_failed"; readonly id: number; readonly code: ErrorCode; readonly message: string }
  | { readonly kind: "closed" };
