import { errorMessage } from "../../core/channel-error.js";
import { conversationKey } from "../../core/conversation/conversation-store.js";
import { replayableJob } from "../../core/dead-letters/dead-letter.js";
import type { Logger } from "../../core/log/logger.js";
import { readDeadLetterBody } from "../queue-body.js";
import type { WorkerEnv } from "../worker-env.js";
import type { DeadLetterTable, MarkedRow } from "./dead-letter-table.js";

/** Wait before a replay is tried again when its conversation's object could not take it. */
const REPLAY_RETRY_MS = 30_000;

/** Hand-backs tried (about five minutes' worth) before a replay is given up and the letter listed again. */
const MAX_HAND_BACKS = 10;

/** What a hand-back works with: the store's tables, the conversations' objects, the log. */
export interface HandBackDeps {
  readonly letters: DeadLetterTable;
  readonly conversations: WorkerEnv["CONVERSATIONS"];
  readonly logger: Logger;
}

/**
 * Hands one letter being replayed to its conversation's object, which runs it again in its lane
 * (`replay(job, markedAt)`; a repeated hand-back of the same replay is taken once there), and
 * forgets the letter once the object has stored it. When the object cannot be reached the
 * hand-back is tried again after {@link REPLAY_RETRY_MS}, and after {@link MAX_HAND_BACKS}
 * failures the letter is listed again, with an error line, rather than lost.
 */
export async function handBack(row: MarkedRow, deps: HandBackDeps): Promise<void> {
  const { letters, logger } = deps;
  const kept = letters.whole(row);
  let read: ReturnType<typeof readDeadLetterBody>;
  try {
    read = readDeadLetterBody({ deadLetter: JSON.parse(kept.letter) as unknown });
  } catch {
    read = undefined;
  }
  if (read === undefined || !("deadLetter" in read) || "stored" in read.deadLetter.job) {
    // Written by this object, so never expected; listed again rather than lost.
    logger.error("a dead letter cannot be read for its replay; it stays listed", { message_id: kept.id });
    letters.relist(kept.id);
    return;
  }
  const job = replayableJob({ ...read.deadLetter, job: read.deadLetter.job });
  const { conversations } = deps;
  const stub = conversations.get(
    conversations.idFromName(conversationKey(kept.channel, job.message.message.conversationId)),
  );
  try {
    const result = await stub.replay(job, row.marked_at);
    // Unless the letter changed meanwhile (its message died again, already): that one stays.
    if (letters.markedAt(kept.id) === row.marked_at) letters.bury(kept.id);
    logger.info("dead letter replayed", {
      message_id: kept.id,
      channel: kept.channel,
      trace_id: job.message.trace?.traceId,
      ...(result === "duplicate" ? { already_handed_back: true } : {}),
    });
  } catch (error) {
    const tries = row.tries + 1;
    if (tries >= MAX_HAND_BACKS) {
      logger.error("a replayed dead letter could not be handed back to its conversation; it is listed again", {
        message_id: kept.id,
        channel: kept.channel,
        tries,
        error: errorMessage(error),
      });
      letters.relist(kept.id);
      return;
    }
    logger.warn("a dead letter could not be handed back for its replay; trying again", {
      message_id: kept.id,
      channel: kept.channel,
      retry_in_ms: REPLAY_RETRY_MS,
      error: errorMessage(error),
    });
    letters.retryAt(kept.id, Date.now() + REPLAY_RETRY_MS, tries);
  }
}
