// One file, over the usual 250 lines, on purpose: the queue is one closure whose lanes, run
// slots, retry timers, size and idle waiters change together on every enqueue, run and outcome;
// split, that state would have to be handed between modules. What stands alone is already out:
// ConversationLanes (core), CrashQuarantine and the dead-letter log line (beside this file).
import type { InboundQueue } from "../../core/app/inbound-queue.js";
import { bufferFullError } from "../../core/app/refusals.js";
import { errorMessage } from "../../core/channel-error.js";
import { conversationKey } from "../../core/conversation/conversation-store.js";
import { ConversationLanes } from "../../core/delivery/conversation-lanes.js";
import type { DeadLetter } from "../../core/delivery/dead-letter.js";
import { type Job, type JobOutcome, newJob } from "../../core/delivery/job.js";
import { jobKey, type PendingJobStore } from "../../core/delivery/pending-job-store.js";
import type { Logger } from "../../core/log/logger.js";
import type { Metrics } from "../../core/metrics/metrics.js";
import { CrashQuarantine } from "./crash-quarantine.js";
import { logDeadLetter } from "./log-dead-letter.js";

/** Options of the job queue. */
export interface JobQueueOptions {
  /** Accepted messages not yet finished (waiting, running or waiting to retry) held at most. */
  readonly capacity: number;
  /** Jobs running at the same time (each of a different conversation). Default 256. */
  readonly concurrency?: number;
  /** Runs a job as far as it goes (the consumer's `run`). */
  readonly run: (job: Job, onProgress: (job: Job) => void) => Promise<JobOutcome>;
  /**
   * Where jobs are kept until they are finished: SQLite with `state_dir`. Without one the queue
   * itself is the only copy (nothing survives a restart, dead letters are logged), which spares
   * the hot path a second map of every message.
   */
  readonly store?: PendingJobStore;
  readonly logger: Logger;
  readonly now?: () => number;
  /**
   * The command that replays a dead letter of this queue's store, for its log line (with a
   * store only: without one a dead letter is not kept, so nothing can replay it).
   */
  readonly replayCommand?: (id: string) => string;
  /** Told of each accepted message and each run's outcome, for the progress log line. */
  readonly onEvent?: (event: JobQueueEvent) => void;
  /** Told of each dead letter once it is recorded: the admin API keeps or trims them. */
  readonly onDeadLetter?: (letter: DeadLetter) => void;
  /** Counts the dead letters the queue makes itself (runs that kept failing unexpectedly); the consumer counts the rest. */
  readonly metrics?: Metrics;
}

/** What the queue tells {@link JobQueueOptions.onEvent}: a message accepted, or how a run ended. */
export type JobQueueEvent = "accepted" | JobOutcome["kind"];

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
  /** Adds jobs recovered from the store (after a restart, or replayed dead letters). */
  restore(jobs: readonly Job[]): void;
  /**
   * Resolves when every job is finished or after `timeoutMs`, then stops retry timers and
   * returns the ids of the messages still unfinished.
   */
  drain(timeoutMs: number): Promise<string[]>;
}

/**
 * A bounded queue over {@link ConversationLanes}: a conversation's jobs run one at a time in
 * acceptance order, and while one waits to retry, the later ones of that conversation wait
 * too. Other conversations are not held up: a job waiting to retry holds no run slot.
 * When `capacity` messages are unfinished, `enqueue` refuses with `buffer_full`, so a slow
 * receiver pushes back on clients instead of growing memory. Runs that fail unexpectedly
 * (the delivery thread died) go through the {@link CrashQuarantine}.
 */
export function createJobQueue(options: JobQueueOptions): JobQueue {
  const { capacity, store, logger, run } = options;
  const concurrency = options.concurrency ?? 256;
  const now = options.now ?? Date.now;
  const lanes = new ConversationLanes<Job>();
  const timers = new Map<string, ReturnType<typeof setTimeout>>();
  // Lanes whose head job may run now; a Set keeps insertion order, so lanes take turns.
  const ready = new Set<string>();
  const quarantine = new CrashQuarantine();
  let running = 0;
  let size = 0;
  let stopped = false;
  let deadLetters = 0;
  let storeError: string | undefined;
  const onEvent = options.onEvent ?? (() => undefined);
  let idleWaiters: (() => void)[] = [];

  const keyOf = (job: Job) => conversationKey(job.message.channel, job.message.message.conversationId);

  const pump = (): void => {
    if (stopped) return;
    for (const key of ready) {
      if (running >= concurrency) return;
      const job = lanes.head(key);
      if (job === undefined) {
        ready.delete(key);
        continue;
      }
      const suspect = quarantine.isSuspect(job.message.id);
      if (!quarantine.mayStart(suspect)) continue;
      ready.delete(key);
      start(key, job, suspect);
    }
  };

  const add = (job: Job): void => {
    const key = keyOf(job);
    if (lanes.push(key, job)) ready.add(key);
  };

  const settle = (key: string): void => {
    size -= 1;
    if (lanes.shift(key) !== undefined) ready.add(key);
    if (size === 0) {
      const waiters = idleWaiters;
      idleWaiters = [];
      for (const resolve of waiters) resolve();
    }
  };

  /** A store write; the Node stores answer at once, so a promise is only watched for failure. */
  const written = (result: void | Promise<void>, what: string, messageId: string): void => {
    if (result instanceof Promise) {
      result.then(
        () => {
          storeError = undefined;
        },
        (error: unknown) => {
          storeError = errorMessage(error);
          logger.error(`cannot record ${what}: ${storeError}`, { message_id: messageId });
        },
      );
    } else if (store !== undefined) storeError = undefined;
  };

  const record = (outcome: JobOutcome): void => {
    const id = outcome.job.message.id;
    if (outcome.kind === "done") written(store?.remove(jobKey(outcome.job)), "a finished job", id);
    else if (outcome.kind === "dead") {
      const letter = { job: outcome.job, error: outcome.error, attempts: outcome.job.attempts, diedAt: now() };
      written(store?.bury(letter), "a dead letter", id);
      deadLetters += 1;
      logDeadLetter(logger, letter, outcome.reason, store === undefined ? undefined : options.replayCommand);
      options.onDeadLetter?.(letter);
    } else written(store?.update(outcome.job), "a job's progress", id);
  };

  const apply = (key: string, result: JobOutcome): void => {
    let outcome = result;
    try {
      record(outcome);
    } catch (error) {
      // The store could not record the outcome (a locked database): the job stays as it
      // was stored and is tried again, so nothing is lost and the lane moves on.
      storeError = errorMessage(error);
      logger.error(`cannot record a job's outcome: ${storeError}`, { message_id: outcome.job.message.id });
      if (outcome.kind !== "retry") outcome = { kind: "retry", job: outcome.job, delayMs: 1_000 };
    }
    onEvent(outcome.kind);
    if (outcome.kind !== "retry") {
      settle(key);
      return;
    }
    lanes.replaceHead(key, outcome.job);
    if (stopped) return;
    timers.set(
      key,
      setTimeout(() => {
        timers.delete(key);
        ready.add(key);
        pump();
      }, outcome.delayMs),
    );
  };

  /**
   * A run that rejected (the delivery thread stopped mid-run). The job is kept as far as its
   * last reported step. A stop of the service is nobody's fault: the job is kept, among the
   * unfinished ones the stop reports, and not counted; anything else goes to the quarantine.
   */
  const failedUnexpectedly = (key: string, job: Job, error: unknown): void => {
    const id = job.message.id;
    const detail = errorMessage(error);
    if (stopped) {
      logger.warn(`job stopped with the delivery thread: ${detail}`, { message_id: id });
      apply(key, { kind: "retry", job, delayMs: 0 });
      return;
    }
    const verdict = quarantine.failed(id);
    if (verdict.kind === "dead") {
      const message = `failed unexpectedly ${verdict.failures} times in a row: ${detail}`;
      options.metrics?.deadLetter(job.message.channel);
      apply(key, { kind: "dead", job, error: { code: "internal_error", message, retryable: false } });
      return;
    }
    logger.error(`job failed unexpectedly: ${detail}`, { message_id: id, failures: verdict.failures });
    apply(key, { kind: "retry", job, delayMs: verdict.delayMs });
  };

  const start = (key: string, job: Job, suspect: boolean): void => {
    running += 1;
    quarantine.started(suspect);
    const progress = (next: Job): void => {
      lanes.replaceHead(key, next);
      written(store?.update(next), "a job's progress", next.message.id);
    };
    run(job, progress)
      .then(
        (outcome) => {
          if (suspect) quarantine.cleared(job.message.id);
          apply(key, outcome);
        },
        (error: unknown) => failedUnexpectedly(key, lanes.head(key) ?? job, error),
      )
      .catch((error: unknown) => {
        logger.error(`cannot settle a job: ${errorMessage(error)}`, { message_id: job.message.id });
      })
      .finally(() => {
        running -= 1;
        quarantine.ended(suspect);
        pump();
      })
      .catch(() => undefined);
  };

  return {
    get size() {
      return size;
    },
    capacity,
    get deadLetters() {
      return deadLetters;
    },
    get storeError() {
      return storeError;
    },
    oldestAcceptedAt() {
      let oldest: number | undefined;
      for (const lane of lanes.all()) {
        const at = lane[0]?.message.receivedAt;
        if (at !== undefined && (oldest === undefined || at < oldest)) oldest = at;
      }
      return oldest;
    },
    enqueue(message) {
      if (stopped || size >= capacity) throw bufferFullError();
      size += 1;
      const job = newJob(message);
      let added: Promise<void> | undefined;
      try {
        added = store?.add(job);
      } catch (error) {
        size -= 1;
        storeError = errorMessage(error);
        throw error;
      }
      if (added === undefined) {
        if (store !== undefined) storeError = undefined;
        add(job);
        onEvent("accepted");
        pump();
        return undefined;
      }
      return added.then(
        () => {
          storeError = undefined;
          add(job);
          onEvent("accepted");
          pump();
        },
        (error: unknown) => {
          size -= 1;
          storeError = errorMessage(error);
          throw error;
        },
      );
    },
    restore(jobs) {
      for (const job of jobs) {
        size += 1;
        add(job);
      }
      pump();
    },
    async drain(timeoutMs) {
      if (size > 0) {
        let timer: ReturnType<typeof setTimeout> | undefined;
        await Promise.race([
          new Promise<void>((resolve) => idleWaiters.push(resolve)),
          new Promise<void>((resolve) => {
            timer = setTimeout(resolve, timeoutMs);
          }),
        ]);
        clearTimeout(timer);
      }
      stopped = true;
      for (const timer of timers.values()) clearTimeout(timer);
      timers.clear();
      const left: string[] = [];
      for (const lane of lanes.all()) for (const job of lane) left.push(job.message.id);
      return left;
    },
  };
}
