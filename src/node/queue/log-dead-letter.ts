import type { DeadLetter } from "../../core/delivery/dead-letter.js";
import type { Logger } from "../../core/log/logger.js";

/**
 * Logs a dead letter: ids, error, attempts and why it was given up on at error level, the
 * full letter at debug level.
 */
export function logDeadLetter(logger: Logger, letter: DeadLetter, reason?: string): void {
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
    reason,
  });
  if (logger.enabled("debug")) logger.debug("dead letter in full", { letter });
}
