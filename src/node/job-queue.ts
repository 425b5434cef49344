import { conversationKey } from "../core/conversation/conversation-store.js";
import { type Job, type JobOutcome, newJob } from "../core/delivery/job.js";
import { ChannelError, errorMessage } from "../core/errors/channel-error.js";
import type { Logger } from "../core/log/logger.js";
import type { Queue } from "../core/queue/queue.js";
import type { Journal } from "./journal.js";

/** Options of the job queue. */
export interface JobQueueOptions {
  /** Accepted messages not yet finished (waiting, running or waiting to retry) held at most. */
  readonly capacity: number;
  /** Jobs running at the same time (each of a different conversation). Default 256. */
  readonly concurrency?: number;
  /** Seconds a refused client is told to wait. Default 1. */
  readonly retryAfterSeconds?: number;
  /** Runs a job as far as it goes (the consumer's `run`). */
  readonly run: (job: Job, onProgress: (job: Job) => void) => Promise<JobOutcome>;
  readonly journal: Journal;
  readonly logger: Logger;
  readonly now?: () => number;
}

/** Unexpected failures in a row after which a job is dead-lettered. */
export const MAX_UNEXPECTED_FAILURES = 5;

/** The Node runtime's queue. */
export interface JobQueue extends Queue {
  /** Accepted messages not yet finished. */
  readonly size: number;
  /** Adds jobs recovered from the journal (after a restart, or replayed dead letters). */
  restore(jobs: readonly Job[]): void;
  /**
   * Resolves when every job is finished or after `timeoutMs`, then stops retry timers and
   * returns the ids of the messages still unfinished.
   */
  drain(timeoutMs: number): Promise<string[]>;
}

interface Lane {
  readonly jobs: Job[];
  timer: ReturnType<typeof setTimeout> | undefined;
}

/**
 * A bounded queue with one lane per conversation: a conversation's jobs run one at a time in
 * acceptance order, and while one waits to retry, the later ones of that conversation wait
 * too. Other conversations are not held up: a job waiting to retry holds no run slot.
 * When `capacity` messages are unfinished, `enqueue` refuses with `buffer_full`, so a slow
 * receiver pushes back on clients instead of growing memory.
 */
export function createJobQueue(options: JobQueueOptions): JobQueue {
  const { capacity, journal, logger, run } = options;
  const concurrency = options.concurrency ?? 256;
  const retryAfterSeconds = options.retryAfterSeconds ?? 1;
  const now = options.now ?? Date.now;
  const lanes = new Map<string, Lane>();
  // Lanes whose head job may run now; a Set keeps insertion order, so lanes take turns.
  const ready = new Set<string>();
  let running = 0;
  let size = 0;
  let stopped = false;
  let idleWaiters: (() => void)[] = [];
  // Unexpected failures in a row, by message id, and whether one such job is running now
  // (see failedUnexpectedly).
  const failures = new Map<string, number>();
  let suspectRunning = false;

  const keyOf = (job: Job) => conversationKey(job.message.channel, job.message.message.conversationId);

  const pump = (): void => {
    if (stopped) return;
    for (const key of ready) {
      if (running >= concurrency) return;
      const lane = lanes.get(key);
      const job = lane?.jobs[0];
      if (lane === undefined || job === undefined) {
        ready.delete(key);
        continue;
      }
      const suspect = failures.size > 0 && failures.has(job.message.id);
      // Jobs that failed unexpectedly run one at a time (see failedUnexpectedly); the others
      // go on around them.
      if (suspect && suspectRunning) continue;
      ready.delete(key);
      start(key, lane, job, suspect);
    }
  };

  const add = (job: Job): void => {
    const key = keyOf(job);
    const lane = lanes.get(key);
    if (lane === undefined) {
      lanes.set(key, { jobs: [job], timer: undefined });
      ready.add(key);
    } else lane.jobs.push(job);
  };

  const settle = (key: string, lane: Lane): void => {
    lane.jobs.shift();
    size -= 1;
    if (lane.jobs.length === 0) lanes.delete(key);
    else ready.add(key);
    if (size === 0) {
      const waiters = idleWaiters;
      idleWaiters = [];
      for (const resolve of waiters) resolve();
    }
  };

  const apply = (key: string, lane: Lane, result: JobOutcome): void => {
    let outcome = result;
    try {
      record(outcome);
    } catch (error) {
      // The journal could not record the outcome (a locked database): the job stays as it
      // was stored and is tried again, so nothing is lost and the lane moves on.
      logger.error(`cannot record a job's outcome: ${errorMessage(error)}`, { message_id: outcome.job.message.id });
      if (outcome.kind !== "retry") {
        outcome = { kind: "retry", job: outcome.job, delayMs: 1_000 };
      }
    }
    switch (outcome.kind) {
      case "done":
      case "dead":
        settle(key, lane);
        break;
      case "retry":
        lane.jobs[0] = outcome.job;
        if (!stopped) {
          lane.timer = setTimeout(() => {
            lane.timer = undefined;
            ready.add(key);
            pump();
          }, outcome.delayMs);
        }
        break;
    }
  };

  const record = (outcome: JobOutcome): void => {
    if (outcome.kind === "done") journal.finish(outcome.job);
    else if (outcome.kind === "dead") {
      journal.dead({ job: outcome.job, error: outcome.error, attempts: outcome.job.attempts, diedAt: now() });
    } else journal.progress(outcome.job);
  };

  /**
   * run() never rejects by contract, but the delivery thread can stop mid-run (a crash, or
   * shutdown stopping it), and every run it held rejects. The job is kept as far as its last
   * reported step and tried again with a growing delay, as a suspect: suspects run one at a
   * time, so a message that crashes the thread again takes no other job down with it, and the
   * one that does it 5 times in a row (or the jobs of a thread that can no longer start)
   * becomes a dead letter rather than looping for ever. A stop is nobody's fault: the job is
   * kept, among the unfinished ones the stop reports, and not counted.
   */
  const failedUnexpectedly = (key: string, lane: Lane, job: Job, error: unknown): void => {
    const id = job.message.id;
    const detail = errorMessage(error);
    if (stopped) {
      logger.warn(`job stopped with the delivery thread: ${detail}`, { message_id: id });
      apply(key, lane, { kind: "retry", job, delayMs: 0 });
      return;
    }
    const count = (failures.get(id) ?? 0) + 1;
    if (count >= MAX_UNEXPECTED_FAILURES) {
      failures.delete(id);
      apply(key, lane, {
        kind: "dead",
        job,
        error: {
          code: "internal_error",
          message: `failed unexpectedly ${count} times in a row: ${detail}`,
          retryable: false,
        },
      });
      return;
    }
    failures.set(id, count);
    logger.error(`job failed unexpectedly: ${detail}`, { message_id: id, failures: count });
    apply(key, lane, { kind: "retry", job, delayMs: 1_000 * 2 ** (count - 1) });
  };

  const start = (key: string, lane: Lane, job: Job, suspect: boolean): void => {
    running += 1;
    if (suspect) suspectRunning = true;
    const progress = (next: Job): void => {
      lane.jobs[0] = next;
      journal.progress(next);
    };
    run(job, progress)
      .then(
        (outcome) => {
          if (suspect) failures.delete(job.message.id);
          apply(key, lane, outcome);
        },
        (error: unknown) => failedUnexpectedly(key, lane, lane.jobs[0] ?? job, error),
      )
      .catch((error: unknown) => {
        logger.error(`cannot settle a job: ${errorMessage(error)}`, { message_id: job.message.id });
      })
      .finally(() => {
        running -= 1;
        if (suspect) suspectRunning = false;
        pump();
      })
      .catch(() => undefined);
  };

  return {
    get size() {
      return size;
    },
    enqueue(message) {
      if (stopped || size >= capacity) {
        throw new ChannelError("buffer_full", "The inbound buffer is full; retry shortly.", {
          status: 503,
          retryable: true,
          retryAfterSeconds,
        });
      }
      size += 1;
      const job = newJob(message);
      const accepted = journal.accept(job);
      if (accepted === undefined) {
        add(job);
        pump();
        return undefined;
      }
      return accepted.then(
        () => {
          add(job);
          pump();
        },
        (error: unknown) => {
          size -= 1;
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
      const left: string[] = [];
      for (const lane of lanes.values()) {
        clearTimeout(lane.timer);
        for (const job of lane.jobs) left.push(job.message.id);
      }
      return left;
    },
  };
}
