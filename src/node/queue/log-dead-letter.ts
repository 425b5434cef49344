import type { DeadLetter } from "../../core/delivery/dead-letter.js";
import type { Logger } from "../../core/log/logger.js";

/**
 * Logs a dead letter: its id, ids, error, attempts and why it was given up on at error level,
 * with the command that replays it when it is kept (`state_dir`); the full letter at debug level.
 */
export function logDeadLetter(
  logger: Logger,
  letter: DeadLetter,
  reason?: string,
  replay?: (id: string) => string,
): void {
  const { job, error } = letter;
  logger.error(`dead letter: ${error.message}`, {
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
    replay:
      replay === undefined ? "not kept: without state_dir a dead letter is only this log line" : replay(job.message.id),
  });
  if (logger.enabled("debug")) logger.debug("dead letter in full", { letter });
}

/**
 * The offline CLI command that replays a dead letter kept in the `state_dir` of the
 * configuration at `configPath` (absolute, so it works from any directory); a placeholder
 * for the file when the service was started without one (tests, embedding).
 */
export function replayCommandFor(configPath: string | undefined): (id: string) => string {
  const config = configPath === undefined ? "<config.json>" : shellWord(configPath);
  return (id) => `npx webhook-channel dead-letters replay --id ${id} --config ${config}`;
}

/** A path as one shell word, quoted when it holds anything a shell would split or expand. */
function shellWord(value: string): string {
  return /^[\w./:@+-]+$/.test(value) ? value : `'${value.replaceAll("'", "'\\''")}'`;
}
