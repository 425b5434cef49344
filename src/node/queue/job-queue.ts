import type { InboundQueue } from "../../core/app/inbound-queue.js";
import { bufferFullError } from "../../core/app/refusals.js";
import { errorMessage } from "../../core/channel-error.js";
import { createMemoryConversationStore } from "../../core/conversation/memory-conversation-store.js";
import { type Job, newJob } from "../../core/lifecycle/job.js";
import { createMemoryLaneStore } from "../../core/lifecycle/memory-lane-store.js";
import { noopMetrics } from "../../core/metrics/noop-metrics.js";
import { noopOperatorEvents } from "../../core/operator-events/operator-events.js";
import { createMemoryCircuitStore } from "../../core/receiver/memory-circuit-store.js";
import { noTimeline } from "../../core/timeline/timeline-recorder.js";
import { waitAtMost } from "../../core/wait-at-most.js";
import { createCommitLag } from "./commit-lag.js";
import type { JobQueueOptions } from "./job-queue-options.js";
import { type LaneOwnership, soleOwnership } from "./lane-ownership.js";
import { LaneSchedule } from "./lane-schedule.js";
import { createNodeCircuit, type ReceiverView } from "./node-circuit.js";
import { createQueueRunner } from "./queue-runner.js";
import { NOT_KEPT } from "./replay-hint.js";

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
  /**
   * The channel's settings changed (a reload): its receiver circuit decides under them now, so
   * that replies held for a receiver no longer configured go at once.
   */
  settingsChanged(): void;
  /** True while job `id` of lane `key` (its conversation key) runs here now. */
  isRunning(key: string, id: string): boolean;
  /** The job just ahead of `id` in lane `key` (see `LaneSchedule.ahead`). */
  aheadOf(key: string, id: string): string | null | undefined;
  /**
   * A write check of the state that began at `at` (`performance.now()`) committed: a store error
   * older than it is forgotten, as a successful write would have done.
   */
  writesConfirmed(at: number): void;
  /** How the channel's receiver stands; undefined without a receiver circuit. */
  receiver(): ReceiverView | undefined;
  /**
   * Adds jobs recovered from the store (after a restart, replayed dead letters, a conversation
   * taken over from another replica) at the end of their lanes; one it holds already is skipped.
   * A job `dueAt` gives a time (epoch ms; a stored job that waited for a retry) waits until then
   * when it heads its lane. Returns how many were added.
   */
  restore(jobs: readonly Job[], dueAt?: (job: Job) => number | undefined): number;
  /**
   * Places a stored job taken from the store (a replayed dead letter) under a place reserved for
   * it by {@link reserve} before it was taken, as an accepted message's is: a placing that reads
   * the conversation's stored jobs counts this one's place, so the queue never holds more than
   * `capacity`.
   */
  placeTaken(job: Job, place: (job: Job) => Promise<"here" | "loaded" | "elsewhere">): Promise<void>;
  /** Counts `count` places as taken until {@link placeTaken} or {@link unreserve} gives them back. */
  reserve(count: number): void;
  unreserve(count: number): void;
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
  /**
   * Drops every job of conversation `key`, leaving them stored: the ticket this replica held of
   * it can no longer be written under. A run under way ends without changing the lanes, and the
   * conversation's next run waits for it. The jobs that finished here lately are forgotten too:
   * their deletes may not have been made, and a read of the conversation runs them again. Returns
   * how many were dropped.
   */
  drop(key: string): number;
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
  let storeFailedAt = 0;
  const failed = (error: string): void => {
    storeError = error;
    storeFailedAt = performance.now();
  };
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
      if (error === undefined) storeError = undefined;
      else failed(error);
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
    isRunning: (key, id) => lanes.isRunning(key, id),
    aheadOf: (key, id) => lanes.ahead(key, id),
    settingsChanged: () => circuit?.reconsider(),
    writesConfirmed(at) {
      if (at > storeFailedAt) storeError = undefined;
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
        failed(errorMessage(error));
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
          failed(errorMessage(error));
          placing?.unsure(job, error);
          throw error;
        },
      );
    },
    restore(jobs, dueAt) {
      let added = 0;
      for (const job of jobs) {
        if (!lanes.add(job)) continue;
        added += 1;
        const due = dueAt?.(job);
        if (due !== undefined) lanes.defer(job, due);
      }
      runner.pump();
      return added;
    },
    reserve(count) {
      for (let index = 0; index < count; index += 1) lanes.reserve();
    },
    unreserve(count) {
      for (let index = 0; index < count; index += 1) lanes.release();
    },
    placeTaken(job, place) {
      return place(job).then(
        (where) => {
          if (where === "here") {
            lanes.add(job, true);
            runner.pump();
          } else lanes.release();
        },
        (error: unknown) => {
          lanes.release();
          throw error;
        },
      );
    },
    forsake: () => lanes.forsake(),
    drop: (key) => lanes.drop(key, true),
    hold(on) {
      held = on;
    },
    wake: () => runner.pump(),
    knows: (id) => lanes.knows(id),
    async drain(timeoutMs) {
      await waitAtMost(lanes.idle(), timeoutMs);
      circuit?.stop();
      return lanes.stop();
    },
  };
}
