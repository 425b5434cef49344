// What an outcome means is not decided here: the core's settleOutcome turns it into a
// settlement, and the queue only carries it out on its lanes (LaneSchedule) and the job store,
// as its JobLedger. What is left here is the Node part: run slots and the crash quarantine.
// Over 300 lines on purpose: the run slots, the ledger, the store writes' error state and the
// unexpected-failure path share one closure's state (running count, store error, dead letters
// made), and each of them is already the thin side of a part with a file of its own
// (LaneSchedule, ReceiverGate, CrashQuarantine, the store, and with replicas LaneOwnership).
import type { InboundQueue } from "../../core/app/inbound-queue.js";
import { bufferFullError } from "../../core/app/refusals.js";
import { errorMessage } from "../../core/channel-error.js";
import { conversationKey } from "../../core/conversation/conversation-store.js";
import type { DeadLetter } from "../../core/dead-letters/dead-letter.js";
import { type Job, type JobOutcome, newJob } from "../../core/lifecycle/job.js";
import { type JobLedger, writeSettlement } from "../../core/lifecycle/job-ledger.js";
import { jobKey, type PendingJobStore } from "../../core/lifecycle/pending-job-store.js";
import { type Settlement, settleOutcome, unstoredSettlement } from "../../core/lifecycle/settle-outcome.js";
import { createVolatileJobStore } from "../../core/lifecycle/volatile-job-store.js";
import type { Logger } from "../../core/log/logger.js";
import type { Metrics } from "../../core/metrics/metrics.js";
import { noopMetrics } from "../../core/metrics/noop-metrics.js";
import type { Admission, CircuitPolicy } from "../../core/receiver/receiver-circuit.js";
import { CrashQuarantine } from "./crash-quarantine.js";
import type { LaneOwnership } from "./lane-ownership.js";
import { LaneSchedule } from "./lane-schedule.js";
import { ReceiverGate, type ReceiverView } from "./receiver-gate.js";
import { NOT_KEPT } from "./replay-hint.js";

/** Options of the job queue. */
export interface JobQueueOptions {
  /** Accepted messages not yet finished (waiting, running or waiting to retry) held at most. */
  readonly capacity: number;
  /** Jobs running at the same time (each of a different conversation). Default 256. */
  readonly concurrency?: number;
  /** Runs a job as far as it goes (the consumer's `run`), posting as `admission` allows. */
  readonly run: (job: Job, onProgress: (job: Job) => void | Promise<void>, admission: Admission) => Promise<JobOutcome>;
  /**
   * The channel's receiver circuit (`webhook.delivery.circuit_failures`), its policy asked at
   * each decision so that a reload reaches it. Without it every run posts.
   */
  readonly receiver?: { readonly channel: string; readonly policy: () => CircuitPolicy };
  /**
   * Where jobs are kept until they are finished: the state backend's (SQLite with
   * `state_dir`). Default: the volatile store of the memory mode, which keeps nothing, so
   * the queue itself is the only copy.
   */
  readonly store?: PendingJobStore;
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
  /** With several replicas (Postgres): which conversations this one runs. Default: all it holds. */
  readonly ownership?: LaneOwnership;
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
  /** How the channel's receiver stands; undefined without a receiver circuit. */
  receiver(): ReceiverView | undefined;
  /**
   * Adds jobs recovered from the store (after a restart, replayed dead letters, a conversation
   * taken over from another replica) at the end of their lanes; one it holds already is skipped.
   * Returns how many were added.
   */
  restore(jobs: readonly Job[]): number;
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

const SETTLED_EVENT: Readonly<Record<Settlement["kind"], JobOutcome["kind"]>> = {
  finish: "done",
  postpone: "retry",
  hold: "wait",
  bury: "dead",
};

/**
 * A bounded queue over {@link ConversationLanes}: a conversation's jobs run one at a time in
 * acceptance order, and while one waits to retry, the later ones of that conversation wait
 * too. Other conversations are not held up: a job waiting to retry holds no run slot.
 * When `capacity` messages are unfinished, `enqueue` refuses with `buffer_full`, so a slow
 * receiver pushes back on clients instead of growing memory. Runs that fail unexpectedly
 * (the delivery thread died) go through the {@link CrashQuarantine}.
 */
export function createJobQueue(options: JobQueueOptions): JobQueue {
  const { capacity, logger, run } = options;
  const store = options.store ?? createVolatileJobStore();
  const concurrency = options.concurrency ?? 256;
  const now = options.now ?? Date.now;
  const replayHint = options.replayHint ?? (() => NOT_KEPT);
  const onEvent = options.onEvent ?? (() => undefined);
  const onDeadLetter = options.onDeadLetter ?? (() => undefined);
  const metrics = options.metrics ?? noopMetrics;
  const quarantine = new CrashQuarantine();
  const lanes = new LaneSchedule(() => pump(), now);
  const gate =
    options.receiver === undefined
      ? undefined
      : new ReceiverGate({
          channel: options.receiver.channel,
          policy: options.receiver.policy,
          now,
          logger,
          metrics,
          wake: (keys) => lanes.wakeNow(keys),
          pending: () => lanes.size,
        });
  let running = 0;
  let deadLetters = 0;
  let storeError: string | undefined;

  const mayStart = (job: Job): boolean => quarantine.mayStart(quarantine.isSuspect(job.message.id));
  const { ownership } = options;
  const pump = (): void => {
    if (lanes.isStopped || running >= concurrency || ownership?.mayRun() === false) return;
    for (const { key, job } of lanes.startable(mayStart)) {
      start(key, job, quarantine.isSuspect(job.message.id));
      if (running >= concurrency) return;
    }
  };

  /**
   * A store write nothing waits for (a retry's count, a finished job): a promise is only
   * watched for failure.
   */
  const written = (result: void | Promise<void>, what: string, messageId: string): void => {
    if (!(result instanceof Promise)) {
      storeError = undefined;
      return;
    }
    result.then(
      () => {
        storeError = undefined;
      },
      (error: unknown) => {
        storeError = errorMessage(error);
        logger.error(`cannot record ${what}: ${storeError}`, { message_id: messageId });
      },
    );
  };

  /** The job left its lane: with replicas, an emptied conversation is given up once `removed` settles. */
  const left = (job: Job, removed: void | Promise<void>): void => {
    if (ownership === undefined) return;
    const { channel } = job.message;
    const key = conversationKey(channel, job.message.message.conversationId);
    if (lanes.head(key) === undefined)
      ownership.released(key, channel, removed instanceof Promise ? removed : undefined);
  };

  // Store first, lanes second: a store that throws leaves the lanes as they were.
  const ledger: JobLedger = {
    finish(job) {
      const removed = store.remove(jobKey(job));
      written(removed, "a finished job", job.message.id);
      lanes.leave(job);
      left(job, removed);
    },
    postpone(job, dueAt) {
      written(store.update(job), "a job's progress", job.message.id);
      lanes.postpone(job, dueAt);
    },
    hold(job, until) {
      written(store.update(job), "a job's progress", job.message.id);
      lanes.postpone(job, until);
      gate?.hold(conversationKey(job.message.channel, job.message.message.conversationId));
    },
    bury(letter) {
      const buried = store.bury(letter);
      written(buried, "a dead letter", letter.job.message.id);
      deadLetters += 1;
      metrics.deadLetter(letter.job.message.channel);
      // The letter is stored (or, in memory, logged next): a hook that fails must not put
      // back a job that left its store.
      const cannotKeep = (error: unknown): void => {
        logger.error(`cannot keep a dead letter for the admin API: ${errorMessage(error)}`, {
          message_id: letter.job.message.id,
        });
      };
      try {
        const kept = onDeadLetter(letter);
        if (kept instanceof Promise) kept.catch(cannotKeep);
      } catch (error) {
        cannotKeep(error);
      }
      lanes.leave(letter.job);
      // Known as finished until the burial commits (a replica loading the conversation meanwhile
      // must not run it again), then forgotten, so that a replay of the letter runs.
      const id = letter.job.message.id;
      if (buried instanceof Promise) buried.finally(() => lanes.forgetFinished(id)).catch(() => undefined);
      else lanes.forgetFinished(id);
      left(letter.job, buried);
    },
  };

  const apply = (outcome: JobOutcome, admission: Admission): void => {
    const ruled = gate === undefined ? outcome : gate.rule(outcome, admission);
    const settlement = settleOutcome(ruled, { now: now(), replayHint });
    try {
      // Nothing here is waited for: a later write that fails is logged by `written`, and a
      // store that throws at once (a dead letter's own transaction) lands below.
      void writeSettlement(settlement, ledger, logger);
      onEvent(SETTLED_EVENT[settlement.kind]);
    } catch (error) {
      // The store could not record the outcome (a locked database): the job stays as it
      // was stored and is tried again, so nothing is lost and the lane moves on.
      storeError = errorMessage(error);
      logger.error(`cannot record a job's outcome: ${storeError}`, { message_id: outcome.job.message.id });
      // Only a job still at the head of its lane is put back: one that left it (its
      // settlement was stored, a later step failed) must not take the next job's place.
      if (lanes.isHead(outcome.job)) {
        const retry = unstoredSettlement(outcome.job, now());
        lanes.postpone(retry.job, retry.dueAt);
        onEvent("retry");
      }
    }
  };

  /**
   * A run that rejected (the delivery thread stopped mid-run). The job is kept as far as its
   * last reported step. A stop of the service is nobody's fault: the job is kept, among the
   * unfinished ones the stop reports, and not counted; anything else goes to the quarantine.
   */
  const failedUnexpectedly = (job: Job, error: unknown, admission: Admission): void => {
    const id = job.message.id;
    const detail = errorMessage(error);
    if (lanes.isStopped) {
      logger.warn(`job stopped with the delivery thread: ${detail}`, { message_id: id });
      apply({ kind: "retry", job, delayMs: 0 }, admission);
      return;
    }
    const verdict = quarantine.failed(id);
    if (verdict.kind === "dead") {
      const message = `failed unexpectedly ${verdict.failures} times in a row: ${detail}`;
      apply({ kind: "dead", job, error: { code: "internal_error", message, retryable: false } }, admission);
      return;
    }
    logger.error(`job failed unexpectedly: ${detail}`, { message_id: id, failures: verdict.failures });
    apply({ kind: "retry", job, delayMs: verdict.delayMs }, admission);
  };

  const start = (key: string, job: Job, suspect: boolean): void => {
    running += 1;
    quarantine.started(suspect);
    gate?.started(key);
    const admission = gate === undefined ? "send" : gate.admit(job);
    // The run waits for this write: with state_dir, replies are stored before the first is
    // posted. A failure is the run's to report (it retries the step), so it is not logged here.
    const progress = (next: Job): void | Promise<void> => {
      lanes.progress(key, next);
      const result = store.update(next);
      if (!(result instanceof Promise)) {
        storeError = undefined;
        return;
      }
      return result.then(
        () => {
          storeError = undefined;
        },
        (error: unknown) => {
          storeError = errorMessage(error);
          throw error;
        },
      );
    };
    run(job, progress, admission)
      .then(
        (outcome) => {
          if (suspect) quarantine.cleared(job.message.id);
          apply(outcome, admission);
        },
        (error: unknown) => failedUnexpectedly(lanes.head(key) ?? job, error, admission),
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

  const accepted = (job: Job): void => {
    storeError = undefined;
    lanes.add(job, true);
    onEvent("accepted");
    pump();
  };

  /**
   * With replicas, a stored job runs where its conversation runs (see {@link LaneOwnership}).
   * Placing is not waited for: the job is stored, so its 200 goes at once, and what decides
   * its place (the conversation's stored jobs, in acceptance order) is in the database. Its
   * reservation counts it until it is placed, so a drain waits for it.
   */
  const placed = (job: Job, owner: LaneOwnership): void => {
    void placeNow(job, owner);
  };
  const placeNow = (job: Job, owner: LaneOwnership): Promise<void> =>
    owner.place(job).then(
      (place) => {
        if (place === "here") {
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

  return {
    get size() {
      return lanes.size;
    },
    capacity,
    get deadLetters() {
      return deadLetters;
    },
    get storeError() {
      return storeError;
    },
    oldestAcceptedAt: () => lanes.oldestAcceptedAt(),
    receiver: () => gate?.view(),
    enqueue(message) {
      if (lanes.isStopped || lanes.size >= capacity) throw bufferFullError();
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
        if (ownership === undefined) accepted(job);
        else placed(job, ownership);
        return undefined;
      }
      return added.then(
        () => (ownership === undefined ? accepted(job) : placed(job, ownership)),
        (error: unknown) => {
          lanes.release();
          storeError = errorMessage(error);
          throw error;
        },
      );
    },
    restore(jobs) {
      let added = 0;
      for (const job of jobs) if (lanes.add(job)) added += 1;
      pump();
      return added;
    },
    forsake: () => lanes.forsake(),
    wake: pump,
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
      gate?.stop();
      return lanes.stop();
    },
  };
}
