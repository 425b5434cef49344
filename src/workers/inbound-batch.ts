import { errorMessage } from "../core/channel-error.js";
import type { Clock } from "../core/clock.js";
import type { Consumer } from "../core/consumer/create-consumer.js";
import { conversationKey } from "../core/conversation/conversation-store.js";
import { ConversationLanes } from "../core/delivery/conversation-lanes.js";
import { type Job, type JobError, newJob } from "../core/delivery/job.js";
import { jobKey, type PendingJobStore } from "../core/delivery/pending-job-store.js";
import { DEFAULT_RETRY_POLICY, nextDelayMs } from "../core/delivery/retry-policy.js";
import type { Logger } from "../core/log/logger.js";
import { bodyRef, type DeadLetterBody, fitsInline, type InboundBody, readInboundBody } from "./queue-body.js";

/** Longest delay Cloudflare Queues accept on `retry()`: 12 hours. */
export const MAX_QUEUE_DELAY_SECONDS = 43_200;

/** Seconds before a message is tried again when the dead-letter queue refused it. */
const DEAD_LETTER_RETRY_SECONDS = 60;

/** What the inbound consumer is built from. */
export interface InboundBatchDeps {
  /** The core consumer; `run` decides done, retry (after how long) or dead. */
  readonly consumer: Pick<Consumer, "run">;
  readonly jobs: PendingJobStore;
  /** Producer of the dead-letter queue. */
  readonly deadLetters: Queue<unknown>;
  readonly clock: Clock;
  readonly logger: Logger;
  /** Jitter source in [0, 1); tests pin it. */
  readonly random: () => number;
}

/** A message's job as loaded for a run, and whether a copy of it is stored. */
interface Loaded {
  readonly job: Job;
  readonly stored: boolean;
}

/**
 * The consumer of the inbound queue. Each message is settled on its own, after the core
 * consumer ran its job:
 * - done: `ack()`;
 * - retry: `retry({ delaySeconds })` with the core's backoff, whose attempt count comes from
 *   `message.attempts` (or from the job's saved progress); once the brain has answered, the
 *   job (its rendered replies, how many were delivered) is saved in the conversation's
 *   Durable Object first, so a redelivery resumes it and never asks the brain again;
 * - dead (not retryable, or the policy is exhausted): sent to the dead-letter queue, and
 *   only then acked. A message is never acked while it is neither answered nor dead-lettered.
 *
 * Messages of one conversation in a batch run one after another, in batch order, through the
 * core's {@link ConversationLanes}; conversations run concurrently. The handler never throws,
 * so one message cannot fail the batch.
 */
export function createInboundBatchHandler(deps: InboundBatchDeps): (batch: MessageBatch<unknown>) => Promise<void> {
  const { consumer, jobs, deadLetters, clock, logger, random } = deps;

  /** Saves a job's progress; on failure a redelivery asks the brain again (at least once). */
  const save = async (job: Job): Promise<void> => {
    await Promise.resolve(jobs.update(job)).catch((error: unknown) => {
      logger.warn("the progress of a job could not be saved; a retry may ask the brain again", {
        message_id: job.message.id,
        error: errorMessage(error),
      });
    });
  };

  const forget = async (job: Job): Promise<void> => {
    await Promise.resolve(jobs.remove(jobKey(job))).catch(() => undefined);
  };

  /**
   * The job to run: the stored one when the body points at it or an earlier attempt saved
   * progress, else a new job. Undefined when the message was settled here: a store that
   * cannot be read yet (retried), or a stored job already answered (a duplicate, acked).
   */
  const load = async (message: Message<unknown>, body: InboundBody): Promise<Loaded | undefined> => {
    const { stored: key } = bodyRef(body);
    const byReference = "stored" in body;
    let found: Job | undefined;
    if (byReference || message.attempts > 1) {
      try {
        found = await jobs.get(key);
      } catch (error) {
        const delaySeconds = toDelaySeconds(nextDelayMs(message.attempts, DEFAULT_RETRY_POLICY, random, undefined));
        logger.warn("a stored job cannot be read yet; retrying", {
          message_id: key.id,
          channel: key.channel,
          attempt: message.attempts,
          delay_seconds: delaySeconds,
          error: errorMessage(error),
        });
        message.retry({ delaySeconds });
        return undefined;
      }
    }
    if (found !== undefined) return { job: found, stored: true };
    if (byReference) {
      // At-least-once delivery: a copy of a message that was answered and forgotten.
      logger.warn("a stored job is gone (already answered); acknowledging the duplicate", { message_id: key.id });
      message.ack();
      return undefined;
    }
    // Without saved progress, every earlier attempt failed at the brain: count them.
    return { job: resumed(newJob(body), message.attempts), stored: false };
  };

  const deadLetter = async (
    message: Message<unknown>,
    job: Job,
    error: JobError,
    stored: boolean,
    reason?: string,
  ): Promise<void> => {
    const inline = fitsInline(job);
    if (!inline) {
      try {
        await jobs.update(job);
      } catch (storeError) {
        logger.error("a dead letter could not be stored; the message stays on the inbound queue", {
          message_id: job.message.id,
          error: errorMessage(storeError),
        });
        message.retry({ delaySeconds: DEAD_LETTER_RETRY_SECONDS });
        return;
      }
    }
    const carried = inline ? job : { stored: jobKey(job) };
    const letter: DeadLetterBody = { deadLetter: { job: carried, error, attempts: job.attempts, diedAt: clock.now() } };
    try {
      await deadLetters.send(letter, { contentType: "json" });
    } catch (sendError) {
      logger.error("the dead-letter queue refused a message; it stays on the inbound queue", {
        message_id: job.message.id,
        error: errorMessage(sendError),
      });
      if (inline && job.replies !== undefined) await save(job);
      message.retry({ delaySeconds: DEAD_LETTER_RETRY_SECONDS });
      return;
    }
    message.ack();
    // The letter carries the job now; a stored copy is the dead-letter consumer's to delete.
    if (stored && inline) await forget(job);
    logger.error("message not answered: moved to the dead-letter queue", {
      channel: job.message.channel,
      message_id: job.message.id,
      conversation_id: job.message.message.conversationId,
      step: job.replies === undefined ? "brain" : "delivery",
      replies_delivered: job.delivered,
      replies: job.replies?.length,
      attempts: job.attempts,
      code: error.code,
      error: error.message,
      status: error.status,
      reason,
    });
  };

  const handle = async (message: Message<unknown>, body: InboundBody): Promise<void> => {
    const loaded = await load(message, body);
    if (loaded === undefined) return;
    let { stored } = loaded;
    // Replies are saved once produced, before their delivery: if this invocation dies midway
    // (a deploy, an eviction, a time limit), the redelivered message resumes them with the same
    // webhook-id and sequence instead of asking the brain again.
    const outcome = await consumer.run(loaded.job, async (progress) => {
      await jobs.update(progress);
      stored = true;
    });
    switch (outcome.kind) {
      case "done":
        message.ack();
        if (stored) await forget(outcome.job);
        if (logger.enabled("debug")) logger.debug("message answered", { message_id: outcome.job.message.id });
        return;
      case "retry":
        // The core logged the failure. Progress made (or already saved) must survive it.
        if (stored || outcome.job.replies !== undefined) await save(outcome.job);
        message.retry({ delaySeconds: toDelaySeconds(outcome.delayMs) });
        return;
      case "dead":
        await deadLetter(message, outcome.job, outcome.error, stored, outcome.reason);
        return;
    }
  };

  /** Runs a lane's messages one after another; a bug in one retries it and goes on. */
  const runLane = async (lane: readonly { message: Message<unknown>; body: InboundBody }[]): Promise<void> => {
    for (const { message, body } of lane) {
      try {
        await handle(message, body);
      } catch (error) {
        logger.error("unexpected error in the inbound consumer", { error: errorMessage(error) });
        message.retry({ delaySeconds: DEAD_LETTER_RETRY_SECONDS });
      }
    }
  };

  return async (batch) => {
    const lanes = new ConversationLanes<{ message: Message<unknown>; body: InboundBody }>();
    const work: Promise<void>[] = [];
    for (const message of batch.messages) {
      const body = readInboundBody(message.body);
      if (body === undefined) {
        // It can never be processed; the dead-letter consumer logs it as it is.
        logger.error("unreadable inbound queue message: moved to the dead-letter queue", {
          queue_message_id: message.id,
        });
        work.push(
          deadLetters.send(message.body).then(
            () => message.ack(),
            () => message.retry({ delaySeconds: DEAD_LETTER_RETRY_SECONDS }),
          ),
        );
        continue;
      }
      const { stored } = bodyRef(body);
      lanes.push(conversationKey(stored.channel, stored.conversationId), { message, body });
    }
    for (const lane of lanes.all()) work.push(runLane(lane));
    await Promise.all(work);
  };
}

/** A new job as it stands after `attempts - 1` failed attempts at the brain. */
function resumed(job: Job, attempts: number): Job {
  if (attempts <= 1) return job;
  return { ...job, attempts: attempts - 1, stepStartedAt: job.message.receivedAt };
}

/** Milliseconds to the whole seconds of `retry()`, rounded up, within the platform's limit. */
function toDelaySeconds(delayMs: number): number {
  return Math.min(MAX_QUEUE_DELAY_SECONDS, Math.max(0, Math.ceil(delayMs / 1000)));
}
