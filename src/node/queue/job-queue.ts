import type { InboundQueue } from "../../core/app/inbound-queue.js";
import { bufferFullError } from "../../core/app/refusals.js";
import { errorMessage } from "../../core/channel-error.js";
import { createMemoryConversationStore } from "../../core/conversation/memory-conversation-store.js";
import type { DeadLetter } from "../../core/dead-letters/dead-letter.js";
import { type Job, newJob } from "../../core/lifecycle/job.js";
import type { LaneRunnerDeps } from "../../core/lifecycle/lane-runner.js";
import type { LaneStore } from "../../core/lifecycle/lane-store.js";
import { createMemoryLaneStore } from "../../core/lifecycle/memory-lane-store.js";
import type { Logger } from "../../core/log/logger.js";
import type { Metrics } from "../../core/metrics/metrics.js";
import { noopMetrics } from "../../core/metrics/noop-metrics.js";
import { noopOperatorEvents, type OperatorEvents } from "../../core/operator-events/operator-events.js";
import type { CircuitStore } from "../../core/receiver/circuit-store.js";
import { createMemoryCircuitStore } from "../../core/receiver/memory-circuit-store.js";
import type { CircuitPolicy } from "../../core/receiver/receiver-circuit.js";
import { noTimeline, type TimelineRecorder } from "../../core/timeline/timeline-recorder.js";
import { type CommitLag, createCommitLag } from "./commit-lag.js";
import { type LaneOwnership, soleOwnership } from "./lane-ownership.js";
import { LaneSchedule } from "./lane-schedule.js";
import { createNodeCircuit, type ReceiverView } from "./node-circuit.js";
import { createQueueRunner, type RunEvent } from "./queue-runner.js";
import { NOT_KEPT } from "./replay-hint.js";

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

/** The Node runtime's queue. */
export interface JobQueue extends InboundQueue {
  /** Accepted messages not yet finished. */
  readonly size: number;
  /** The most it holds: `webhook.buffer_capacity`. */
  readonly capacity: number;
  /** Dead letters made since the queue started. */
  readonly deadLetters: number;
  /**
   * Epoch ms at which the oldest unfinished message was accepted, undefined when none is.
   * Cheap: lanes hold their jobs in acceptance order, so only lane heads are looked at.
   */
  oldestAcceptedAt(): number | undefined;
  /** The error of the last store write when it failed, undefined once a later one succeeded. */
  readonly storeError: string | undefined;
  /** How the channel's receiver stands; undefined without a receiver circuit. */
  receiver(): ReceiverView | undefined;
  /**
   * Adds jobs recovered from the store (after a restart, replayed dead letters, a conversation
   * taken over from another replica) at the end of their lanes; one it holds already is skipped.
   * Returns how many were added.
   */
  restore(jobs: readonly Job[]): number;
  /**
   * While `on`, new messages are refused with `buffer_full` whatever the room: stored work of the
   * channel not yet loaded (a resume larger than the buffer) comes first, in acceptance order.
   */
  hold(on: boolean): void;
  /** Starts what may start: this replica's lease is valid again. */
  wake(): void;
  /**
   * Drops the jobs that are not running, leaving them stored: this replica's lease ran out, and
   * their conversations may run elsewhere now. Returns how many were dropped.
   */
  forsake(): number;
  /** True while the job `id` is in a lane here, or finished here lately (its delete may not have committed). */
  knows(id: string): boolean;
  /**
   * Resolves when every job is finished or after `timeoutMs`, then stops retry timers and
   * returns the ids of the messages still unfinished.
   */
  drain(timeoutMs: number): Promise<string[]>;
}

/**
 * A bounded queue over the channel's lanes: a conversation's jobs run one at a time in
 * acceptance order, and while one waits to retry, the later ones of that conversation wait
 * too. Other conversations are not held up: a job waiting to retry holds no run slot. When
 * `capacity` messages are unfinished, `enqueue` refuses with `buffer_full`, so a slow receiver
 * pushes back on clients instead of growing memory; so it does while an accepted message has
 * waited past a bound for its store's commit, and with `state_unavailable` while the store is
 * known not to take writes (`commit-lag.ts`). Each run is the core's lane runner; the queue's
 * own parts are the lanes in memory, the receiver gate and the run slots.
 */
export function createJobQueue(options: JobQueueOptions): JobQueue {
  const { capacity, logger } = options;
  const store = options.store ?? createMemoryLaneStore(createMemoryConversationStore());
  const now = options.now ?? Date.now;
  const onEvent = options.onEvent ?? (() => undefined);
  const metrics = options.metrics ?? noopMetrics;
  const ownership = options.ownership ?? soleOwnership(options.epoch ?? 1);
  const operatorEvents = options.operatorEvents ?? noopOperatorEvents;
  let held = false;
  const placing = options.ownership;
  const lanes = new LaneSchedule(() => runner.pump(), now);
  let storeError: string | undefined;
  const commits = options.commitLag ?? createCommitLag(now, logger, options.receiver?.channel);
  const hasRoom = (): boolean => !held && !lanes.isStopped && lanes.size < capacity;
  const { receiver } = options;
  const circuit =
    receiver === undefined
      ? undefined
      : createNodeCircuit({
          channel: receiver.channel,
          policy: receiver.policy,
          now,
          logger,
          metrics,
          lanes,
          store: receiver.store ?? createMemoryCircuitStore(),
          refreshMs: receiver.refreshMs,
          outboundUrl: receiver.outboundUrl,
          operatorEvents,
        });
  const runner = createQueueRunner({
    lanes,
    store,
    ownership,
    circuit,
    run: options.run,
    concurrency: options.concurrency ?? 256,
    now,
    replayHint: options.replayHint ?? (() => NOT_KEPT),
    logger,
    metrics,
    onEvent,
    onDeadLetter: options.onDeadLetter ?? (() => undefined),
    timeline: options.timeline ?? noTimeline,
    operatorEvents,
    onStoreResult: (error) => {
      storeError = error;
    },
  });

  const accepted = (job: Job): void => {
    storeError = undefined;
    lanes.add(job, true);
    onEvent("accepted");
    runner.pump();
  };

  /**
   * With replicas, a stored job runs where its conversation runs (see {@link LaneOwnership}).
   * Placing is not waited for: the job is stored, so its 200 goes at once, and what decides its
   * place (the conversation's stored jobs, in acceptance order) is in the database. Its
   * reservation counts it until it is placed, so a drain waits for it.
   */
  const place = (job: Job, owner: LaneOwnership): void => {
    owner.place(job).then(
      (where) => {
        if (where === "here") {
          accepted(job);
          return;
        }
        lanes.release();
        onEvent("accepted");
      },
      (error: unknown) => {
        // Stored, so accepted: a replica's sweep finds a job no replica runs.
        lanes.release();
        onEvent("accepted");
        logger.warn(`an accepted message waits for a replica to take its conversation: ${errorMessage(error)}`, {
          message_id: job.message.id,
        });
      },
    );
  };
  const stored = (job: Job): void => {
    storeError = undefined;
    if (placing === undefined) accepted(job);
    else place(job, placing);
  };

  return {
    get size() {
      return lanes.size;
    },
    capacity,
    get deadLetters() {
      return runner.deadLetters;
    },
    get storeError() {
      return storeError;
    },
    oldestAcceptedAt: () => lanes.oldestAcceptedAt(),
    receiver: () => circuit?.view(),
    hasRoom,
    refusal: () => commits.refusal(),
    enqueue(message) {
      const refused = commits.refusal();
      if (refused !== undefined) throw refused;
      if (!hasRoom()) throw bufferFullError();
      lanes.reserve();
      const job = newJob(message);
      let added: Promise<void> | undefined;
      try {
        added = store.add(job);
      } catch (error) {
        lanes.release();
        storeError = errorMessage(error);
        throw error;
      }
      if (added === undefined) {
        stored(job);
        return undefined;
      }
      commits.asked(job.message.id);
      return added.then(
        () => {
          commits.settled(job.message.id, true);
          stored(job);
        },
        (error: unknown) => {
          commits.settled(job.message.id, false);
          lanes.release();
          storeError = errorMessage(error);
          placing?.unsure(job, error);
          throw error;
        },
      );
    },
    restore(jobs) {
      let added = 0;
      for (const job of jobs) if (lanes.add(job)) added += 1;
      runner.pump();
      return added;
    },
    forsake: () => lanes.forsake(),
    hold(on) {
      held = on;
    },
    wake: () => runner.pump(),
    knows: (id) => lanes.knows(id),
    async drain(timeoutMs) {
      let timer: ReturnType<typeof setTimeout> | undefined;
      await Promise.race([
        lanes.idle(),
        new Promise<void>((resolve) => {
          timer = setTimeout(resolve, timeoutMs);
        }),
      ]);
      clearTimeout(timer);
      circuit?.stop();
      return lanes.stop();
    },
  };
}
