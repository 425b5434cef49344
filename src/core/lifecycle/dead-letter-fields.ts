import type { DeadLetter } from "../dead-letters/dead-letter.js";
import type { LogFields } from "../log/logger.js";

/**
 * The fields of a dead letter's log line, the same on every runtime: everything needed to
 * find and replay it (ids, channel, conversation, sender, step, error, attempts, why it was
 * given up on, and how to replay it). No message or reply content: that is logged at debug
 * level only, with the whole letter.
 */
export function deadLetterFields(letter: DeadLetter, reason: string | undefined, replay: string): LogFields {
  const { job, error } = letter;
  return {
    // A dead letter is kept under its message's id, which is what `dead-letters replay --id` takes.
    id: job.message.id,
    message_id: job.message.id,
    trace_id: job.message.trace?.traceId,
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
    replay,
  };
}
