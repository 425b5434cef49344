import { errorMessage } from "../core/channel-error.js";
import { conversationKey } from "../core/conversation/conversation-store.js";
import { ConversationLanes } from "../core/lifecycle/conversation-lanes.js";
import { DEFAULT_RETRY_POLICY, nextDelayMs } from "../core/lifecycle/retry-policy.js";
import type { Logger } from "../core/log/logger.js";
import type { ConversationObject } from "./conversation/conversation-object.js";
import { bodyRef, type InboundBody, readInboundBody } from "./queue-body.js";

/** Longest delay Cloudflare Queues accept on `retry()`: 12 hours. */
export const MAX_QUEUE_DELAY_SECONDS = 43_200;

/** Seconds before a message is tried again when the dead-letter queue refused it. */
const DEAD_LETTER_RETRY_SECONDS = 60;

/**
 * A batch this large (wrangler.toml's `max_batch_size`) says messages wait behind it: Queues
 * fills a batch before its wait is over only then. Its conversations' runs are not waited for
 * at all, so the backlog moves on at once (Miniflare runs one batch at a time, and Cloudflare
 * starts more invocations only as the backlog grows).
 */
export const BUSY_BATCH_SIZE = 10;

/** What the inbound consumer is built from. */
export interface InboundBatchDeps {
  /** One Durable Object per conversation: the sequencer that runs its jobs. */
  readonly conversations: DurableObjectNamespace<ConversationObject>;
  /** Producer of the dead-letter queue, for bodies that cannot be read. */
  readonly deadLetters: Queue<unknown>;
  readonly logger: Logger;
  /** Jitter source in [0, 1); tests pin it. */
  readonly random: () => number;
}

type Entry = { readonly message: Message<unknown>; readonly body: InboundBody };

/**
 * The consumer of the inbound queue: it hands each message to its conversation's Durable
 * Object and acks it once the hand-over returns: the object stores it and starts its
 * conversation's due messages, waiting for them a short while (none for a full batch, see
 * {@link BUSY_BATCH_SIZE}); what outlasts that goes on under the object's alarm, as every retry
 * does. So an invocation never waits on a slow or hanging receiver or brain, and one
 * conversation holds back no other.
 *
 * A batch's messages are grouped by conversation (the core's {@link ConversationLanes}) and
 * each group goes over in one call, in batch order. A call that fails leaves its messages on
 * the queue, retried with the default backoff; the object recognises a message it already
 * has, so a redelivery is never answered twice. A body that cannot be read goes to the
 * dead-letter queue as it is. The handler never throws, so one message cannot fail the batch.
 */
export function createInboundBatchHandler(deps: InboundBatchDeps): (batch: MessageBatch<unknown>) => Promise<void> {
  const { conversations, deadLetters, logger, random } = deps;

  const handOver = async (entries: readonly Entry[], busy: boolean): Promise<void> => {
    try {
      const stub = conversations.get(conversations.idFromName(keyOf(entries[0]?.body)));
      const results = await stub.enqueue(
        entries.map((entry) => entry.body),
        busy,
      );
      entries.forEach((entry, index) => {
        if (results[index] === "missing") {
          // At-least-once delivery: a copy of a message that was answered and forgotten.
          logger.warn("a stored job is gone (already answered); acknowledging the duplicate", {
            message_id: bodyRef(entry.body).stored.id,
          });
        }
        entry.message.ack();
      });
    } catch (error) {
      for (const { message, body } of entries) {
        const delaySeconds = toDelaySeconds(nextDelayMs(message.attempts, DEFAULT_RETRY_POLICY, random, undefined));
        logger.warn("a message could not be handed to its conversation; retrying", {
          message_id: bodyRef(body).stored.id,
          // Known only for a message carried inline; a stored one is not read just for its log line.
          trace_id: "stored" in body ? undefined : body.trace?.traceId,
          attempt: message.attempts,
          delay_seconds: delaySeconds,
          error: errorMessage(error),
        });
        message.retry({ delaySeconds });
      }
    }
  };

  return async (batch) => {
    const lanes = new ConversationLanes<Entry>();
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
      lanes.push(keyOf(body), { message, body });
    }
    const busy = batch.messages.length >= BUSY_BATCH_SIZE;
    for (const entries of lanes.all()) work.push(handOver(entries, busy));
    await Promise.all(work);
  };
}

/** The conversation a body belongs to, as its Durable Object is named. */
function keyOf(body: InboundBody | undefined): string {
  if (body === undefined) throw new Error("an empty lane");
  const { stored } = bodyRef(body);
  return conversationKey(stored.channel, stored.conversationId);
}

/** Milliseconds to the whole seconds of `retry()`, rounded up, within the platform's limit. */
function toDelaySeconds(delayMs: number): number {
  return Math.min(MAX_QUEUE_DELAY_SECONDS, Math.max(0, Math.ceil(delayMs / 1000)));
}
