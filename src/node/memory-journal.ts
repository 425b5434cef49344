import type { DeadLetter } from "../core/dead-letter/dead-letter.js";
import type { Logger } from "../core/log/logger.js";
import type { Journal } from "./journal.js";

/** The journal without `state_dir`: dead letters are logged and the last `keep` kept in memory. */
export interface MemoryJournal extends Journal {
  /** The most recent dead letters, oldest first. */
  readonly deadLetters: readonly DeadLetter[];
}

/**
 * Dead letters are logged at error level with every field but message text and reply bodies
 * (text is logged only at debug level, where the full letter is logged too).
 */
export function createMemoryJournal(logger: Logger, keep = 1_000): MemoryJournal {
  const deadLetters: DeadLetter[] = [];
  return {
    deadLetters,
    leftoverFate: "lost",
    accept: () => undefined,
    progress: () => undefined,
    finish: () => undefined,
    dead(letter) {
      deadLetters.push(letter);
      if (deadLetters.length > keep) deadLetters.shift();
      logDeadLetter(logger, letter);
    },
  };
}

/** Logs a dead letter: ids, error and attempts at error level, the full letter at debug level. */
export function logDeadLetter(logger: Logger, letter: DeadLetter): void {
  const { job, error } = letter;
  logger.error(`dead letter: ${error.message}`, {
    message_id: job.message.id,
    channel: job.message.channel,
    conversation_id: job.message.message.conversationId,
    sender_id: job.message.message.senderId,
    received_at: new Date(job.message.receivedAt).toISOString(),
    step: job.replies === undefined ? "brain" : "delivery",
    reply_ids: job.replies?.map((reply) => reply.id),
    delivered: job.delivered,
    attempts: letter.attempts,
    code: error.code,
    status: error.status,
    retryable: error.retryable,
  });
  if (logger.enabled("debug")) logger.debug("dead letter in full", { letter });
}
