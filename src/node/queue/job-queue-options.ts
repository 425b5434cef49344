import type { DeadLetter } from "../../core/dead-letters/dead-letter.js";
import type { LaneRunnerDeps } from "../../core/lifecycle/lane-runner.js";
import type { LaneStore } from "../../core/lifecycle/lane-store.js";
import type { Logger } from "../../core/log/logger.js";
import type { Metrics } from "../../core/metrics/metrics.js";
import type { OperatorEvents } from "../../core/operator-events/operator-events.js";
import type { CircuitStore } from "../../core/receiver/circuit-store.js";
import type { CircuitPolicy } from "../../core/receiver/receiver-circuit.js";
import type { TimelineRecorder } from "../../core/timeline/timeline-recorder.js";
import type { CommitLag } from "./commit-lag.js";
import type { LaneOwnership } from "./lane-ownership.js";
import type { RunEvent } from "./queue-runner.js";

/** Options of the job queue. */
export interface JobQueueOptions {
  /** Accepted messages not yet finished (waiting, running or waiting to retry) held at most. */
  readonly capacity: number;
  /** Jobs running at the same time (each of a different conversation). Default 256. */
  readonly concurrency?: number;
  /** Runs a job's steps (the consumer's `run`), storing each through its hooks, posting as admitted. */
  readonly run: LaneRunnerDeps["run"];
  /**
   * The channel's receiver circuit (`webhook.delivery.circuit_failures`), its policy asked at
   * each decision so that a reload reaches it. Without it every run posts.
   */
  readonly receiver?: {
    readonly channel: string;
    readonly policy: () => CircuitPolicy;
    /** The channel's `outbound_url` as configured now, for the operator events of its receiver. */
    readonly outboundUrl?: () => string;
    /** Where its state is kept (default: this process's memory); with replicas, the row they share. */
    readonly store?: CircuitStore;
    /** With a shared store, how often to read it again while lanes wait here. */
    readonly refreshMs?: number | undefined;
  };
  /**
   * Where the lanes are kept: the state backend's (SQLite with `state_dir`, Postgres). Default:
   * the memory mode's, which keeps no job, so the queue itself is the only copy.
   */
  readonly store?: LaneStore;
  /**
   * Which conversations this process runs, and the ticket of each (Postgres: the replicas').
   * Default: every conversation it holds, under `epoch`.
   */
  readonly ownership?: LaneOwnership | undefined;
  /** The epoch of the tickets when this process alone runs its lanes (the store's); default 1. */
  readonly epoch?: number;
  readonly logger: Logger;
  readonly now?: () => number;
  /** What a dead letter's log line says about replaying it (see `replayHintFor`). */
  readonly replayHint?: (id: string) => string;
  /** Told of each accepted message and each run's outcome, for the progress log line. */
  readonly onEvent?: (event: JobQueueEvent) => void;
  /**
   * Told of each dead letter once it is recorded: the admin API keeps or trims them. A promise
   * it returns is only watched for failure.
   */
  readonly onDeadLetter?: (letter: DeadLetter) => unknown;
  /** Counts dead letters as they are stored, and the receiver's changes of state. */
  readonly metrics?: Metrics;
  /** Where each run's calls, POSTs and settlement are recorded; default nowhere. */
  readonly timeline?: TimelineRecorder;
  /** Where dead letters and the receiver's changes of state are raised as operator events; default nowhere. */
  readonly operatorEvents?: OperatorEvents | undefined;
  /** The commits waiting on `store`, shared by every queue on the same database; default the queue's own. */
  readonly commitLag?: CommitLag;
}

/** What the queue tells {@link JobQueueOptions.onEvent}: a message accepted, or how a run ended. */
export type JobQueueEvent = "accepted" | RunEvent;
