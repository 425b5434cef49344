/**
 * What the Node job queue's tests share: the queued message they enqueue, a gate that holds runs
 * until it opens, and a queue over a run function written by hand, with its dead letters.
 */
import type { DeadLetter } from "../../../src/core/dead-letters/dead-letter.js";
import type { Job, JobOutcome } from "../../../src/core/lifecycle/job.js";
import type { QueuedMessage } from "../../../src/core/message/inbound-message.js";
import { createJobQueue } from "../../../src/node/queue/job-queue.js";
import { createLogSink } from "../../support/log-sink.js";

/** A message of `conversationId` on the `webhook` channel whose text is its id. */
export const message = (id: string, conversationId: string): QueuedMessage => ({
  id,
  channel: "webhook",
  receivedAt: 0,
  message: { senderId: "s", conversationId, text: id },
});

/** A promise that stays pending until `open` is called: runs that await it hold their lane. */
export function gate(): { promise: Promise<void>; open: () => void } {
  let open: () => void = () => undefined;
  const promise = new Promise<void>((resolve) => {
    open = resolve;
  });
  return { promise, open };
}

/** The outcome of a run that finished `job`. */
export const done = (job: Job): JobOutcome => ({ kind: "done", job });

/** The dead letters a queue hands on (its `onDeadLetter`), in order. */
export function letterSink(): { deadLetters: DeadLetter[]; onDeadLetter: (letter: DeadLetter) => void } {
  const deadLetters: DeadLetter[] = [];
  return { deadLetters, onDeadLetter: (letter) => deadLetters.push(letter) };
}

/** A job queue in memory that runs each job with `run`, and the dead letters it handed on. */
export function queueWith(run: (job: Job) => Promise<JobOutcome>, capacity = 100, concurrency?: number) {
  const { logger } = createLogSink();
  const store = letterSink();
  const queue = createJobQueue({
    capacity,
    ...(concurrency === undefined ? {} : { concurrency }),
    run: (job) => run(job),
    onDeadLetter: store.onDeadLetter,
    logger,
  });
  return { queue, store };
}
