import { errorMessage } from "../../core/channel-error.js";
import { type Job, type JobError, newJob } from "../../core/lifecycle/job.js";
import type { PendingJobStore } from "../../core/lifecycle/pending-job-store.js";
import type { Logger } from "../../core/log/logger.js";
import { bodyRef, readDeadLetterBody, type StoredJobRef } from "../queue-body.js";

/** Seconds before a dead letter is tried again after its first failed delivery. */
const RETRY_SECONDS = 30;

/** The longest wait between two tries of a dead letter. */
const MAX_RETRY_SECONDS = 600;

/**
 * The wait before a dead letter's next try after `attempts` deliveries, doubling: the platform
 * deletes a letter once its tries run out, so they must outlast an outage of the store, not a
 * minute or two of it.
 */
const retryDelay = (attempts: number): number =>
  Math.min(MAX_RETRY_SECONDS, RETRY_SECONDS * 2 ** Math.max(0, attempts - 1));

/** What the dead-letter consumer is built from. */
export interface DeadLetterBatchDeps {
  readonly jobs: PendingJobStore;
  readonly logger: Logger;
  /** Whether the dead-letter store kept a letter of this id and death already (a copy delivered again). */
  readonly known?: ((id: string, diedAt: number) => Promise<boolean>) | undefined;
}

/**
 * The consumer of the dead-letter queue: keeps each dead letter, then logs it as one JSON line
 * with everything needed to find and replay it (ids, channel, conversation, sender, reason,
 * attempts, and the replies that were not delivered), then acks it: at `info` (`dead letter
 * kept`) for a letter its conversation's object already reported at `error`, at `error` for a
 * message the platform moved after `max_retries` or whose job is gone. Message and reply
 * content (text, media, sender name, reply bodies) is in that line only when `log_level` is
 * `debug`, as everywhere else; otherwise its size is. A job kept in a Durable Object is
 * read for the line, then deleted.
 */
export function createDeadLetterBatchHandler(
  deps: DeadLetterBatchDeps,
): (batch: MessageBatch<unknown>) => Promise<void> {
  const { jobs, logger, known } = deps;

  /** A conversation's letter whose parked job is gone: kept already, when the store says so. */
  const keptAlready = async (id: string, diedAt: number): Promise<boolean> => {
    try {
      return (await known?.(id, diedAt)) === true;
    } catch {
      return false;
    }
  };

  const handle = async (message: Message<unknown>): Promise<void> => {
    const letter = readDeadLetterBody(message.body);
    if (letter === undefined) {
      logger.error("dead letter: unreadable body", {
        dead_letter_id: message.id,
        ...(logger.enabled("debug") ? { body: message.body } : {}),
      });
      message.ack();
      return;
    }
    let ref: StoredJobRef | undefined;
    let job: Job | undefined;
    let fallback: Job | undefined;
    if ("deadLetter" in letter) {
      const carried = letter.deadLetter.job;
      if ("stored" in carried) ref = carried;
      else job = carried;
    } else if ("stored" in letter) ref = letter;
    else {
      // Moved by the platform after max_retries (never handed over); a parked job, if any, is the message.
      ref = bodyRef(letter);
      fallback = newJob(letter);
    }
    if (ref !== undefined) {
      try {
        job = (await jobs.get(ref.stored)) ?? fallback;
      } catch (error) {
        if (fallback === undefined) {
          logger.warn("dead letter: its stored job cannot be read yet; retrying", {
            dead_letter_id: message.id,
            message_id: ref.stored.id,
            error: errorMessage(error),
          });
          message.retry({ delaySeconds: retryDelay(message.attempts) });
          return;
        }
        // The body is the whole message (the platform moved it, most likely because this very
        // object was unreachable): it is kept as it came rather than left to max_retries.
        job = fallback;
      }
    }
    if (job === undefined && ref !== undefined && "deadLetter" in letter) {
      if (await keptAlready(ref.stored.id, letter.deadLetter.diedAt)) {
        // Its parked job went once the letter was kept: this is a copy the queue delivered again.
        logger.info("dead letter: kept already (a copy delivered again)", {
          dead_letter_id: message.id,
          message_id: ref.stored.id,
        });
        message.ack();
        return;
      }
    }
    const died: { error: JobError; attempts: number; diedAt: number } =
      "deadLetter" in letter
        ? { error: letter.deadLetter.error, attempts: letter.deadLetter.attempts, diedAt: letter.deadLetter.diedAt }
        : {
            error: { code: "max_retries", message: "the inbound queue's max_retries was reached", retryable: false },
            attempts: message.attempts,
            // When the platform moved it: the same for every copy the queue delivers, so a copy
            // is taken as the letter kept (or replayed, or deleted) already, not as a later death.
            diedAt: movedAt(message),
          };
    const reason =
      "deadLetter" in letter
        ? {
            code: letter.deadLetter.error.code,
            error: letter.deadLetter.error.message,
            retryable: letter.deadLetter.error.retryable,
            status: letter.deadLetter.error.status,
            attempts: letter.deadLetter.attempts,
            died_at: new Date(letter.deadLetter.diedAt).toISOString(),
          }
        : { code: "max_retries", error: "the inbound queue's max_retries was reached" };
    const id = ref?.stored.id ?? job?.message.id;
    const fields = {
      dead_letter_id: message.id,
      message_id: id,
      ...reason,
      ...(job === undefined ? { job: null } : describe(job, logger.enabled("debug"))),
    };
    // Written once the letter is kept (a retry of this message logs nothing twice). A letter
    // from a conversation's object was logged there at `error` already (`dead letter: <error>`,
    // the line both runtimes write); only a message the platform moved, or one whose job is
    // gone, is reported here at `error`.
    const report = (): void => {
      if ("deadLetter" in letter && job !== undefined) logger.info("dead letter kept", fields);
      else logger.error("dead letter: this message will not be answered", fields);
    };
    if (job !== undefined) {
      // Kept for good in the dead-letter store's Durable Object; only then is the letter acked.
      try {
        await jobs.bury({ ...died, job });
      } catch (error) {
        logger.warn("cannot keep a dead letter yet; retrying", { message_id: id, error: errorMessage(error) });
        message.retry({ delaySeconds: retryDelay(message.attempts) });
        return;
      }
    } else if (ref !== undefined) await Promise.resolve(jobs.remove(ref.stored)).catch(() => undefined);
    report();
    message.ack();
  };

  return async (batch) => {
    await Promise.all(
      batch.messages.map(async (message) => {
        try {
          await handle(message);
        } catch (error) {
          logger.error("unexpected error in the dead-letter consumer", { error: errorMessage(error) });
          message.retry({ delaySeconds: retryDelay(message.attempts) });
        }
      }),
    );
  };
}

/** When the platform put a moved message on the dead-letter queue, stable across its deliveries. */
function movedAt(message: Message<unknown>): number {
  const at = message.timestamp.getTime();
  return Number.isFinite(at) ? at : Date.now();
}

/** The job for the log line; message and reply content only when content may be logged. */
function describe(job: Job, withContent: boolean): Record<string, unknown> {
  const { message } = job.message;
  const fields: Record<string, unknown> = {
    channel: job.message.channel,
    trace_id: job.message.trace?.traceId,
    conversation_id: message.conversationId,
    sender_id: message.senderId,
    received_at: new Date(job.message.receivedAt).toISOString(),
    replies_delivered: job.delivered,
  };
  if (withContent) {
    fields.message = job.message.message;
    if (job.replies !== undefined) fields.replies = job.replies;
  } else {
    fields.text_chars = message.text?.length ?? 0;
    fields.has_media = message.mediaUrl !== undefined;
    if (job.replies !== undefined) {
      fields.replies = job.replies.map(({ id, sequence, body }) => ({ id, sequence, body_bytes: body.length }));
    }
  }
  return fields;
}
