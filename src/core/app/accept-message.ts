import type { Clock, IdGenerator } from "../clock/clock.js";
import type { ChannelConfig } from "../config/config-schema.js";
import { resolveMapping } from "../config/message-fields.js";
import { channelName } from "../config/validate-config.js";
import { ChannelError, errorMessage, isChannelError } from "../errors/channel-error.js";
import { checkBearer, checkJsonContentType, parseJsonObject } from "../http/request-checks.js";
import { type IdempotencyStore, MAX_IDEMPOTENCY_KEY_LENGTH } from "../idempotency/idempotency-store.js";
import type { Logger } from "../log/logger.js";
import type { QueuedMessage } from "../message/inbound-message.js";
import { parseMessage } from "../message/parse-message.js";
import type { Queue } from "../queue/queue.js";

/** What the accept flow needs of an inbound request, whatever the server that received it. */
export interface InboundRequest {
  readonly authorization: string | null;
  readonly contentType: string | null;
  readonly idempotencyKey: string | null;
  /** Reads the whole body, refusing more than 1 MiB with `payload_too_large`. */
  readBody(): Promise<Uint8Array>;
}

/** The 200 body of an accepted message. */
export interface Accepted {
  readonly status: "accepted";
  readonly message_id: string;
  readonly conversation_id: string;
}

/** Runs the contract's checks on one request to a channel and queues the message. */
export type AcceptMessage = (request: InboundRequest) => Promise<Accepted>;

/** What the accept flow of one channel is built from. */
export interface AcceptDeps {
  readonly secret: string;
  readonly queue: Queue;
  readonly clock: Clock;
  readonly newId: IdGenerator;
  readonly logger: Logger;
  readonly idempotency?: IdempotencyStore;
  readonly isShuttingDown: () => boolean;
  /** Seconds a client is told to wait after a 503. */
  readonly retryAfterSeconds: number;
}

/**
 * Builds the accept flow of one channel: shutdown, then the contract's checks in order
 * (Bearer, media type, size, JSON, message), the `Idempotency-Key`, and the queue (503 when
 * full). It throws a ChannelError for every refusal. Both the Hono route and the Node fast
 * path call it, so the flow exists once.
 */
export function createAcceptMessage(channel: ChannelConfig, deps: AcceptDeps): AcceptMessage {
  const { clock, idempotency, logger, newId, queue, retryAfterSeconds, secret } = deps;
  const name = channelName(channel);
  const keys = resolveMapping(channel.webhook.mapping);
  const unavailable = (error: unknown): ChannelError => {
    logger.error("cannot accept a message: a store is unavailable", { channel: name, error: errorMessage(error) });
    return new ChannelError("buffer_full", "The message could not be accepted right now; retry shortly.", {
      status: 503,
      retryable: true,
      retryAfterSeconds,
    });
  };

  return async (request) => {
    if (deps.isShuttingDown()) throw shuttingDownError(retryAfterSeconds);
    checkBearer(request.authorization, secret);
    checkJsonContentType(request.contentType);
    const message = parseMessage(parseJsonObject(await request.readBody()), keys);
    const idempotencyKey = readIdempotencyKey(request.idempotencyKey, idempotency);
    let queued: QueuedMessage = { id: newId(), channel: name, receivedAt: clock.now(), message };
    if (idempotencyKey !== undefined && idempotency !== undefined) {
      const earlier = await guard(unavailable, () =>
        idempotency.reserve(
          name,
          idempotencyKey,
          { messageId: queued.id, conversationId: message.conversationId },
          queued.receivedAt,
        ),
      );
      if (earlier?.committed === true) {
        return {
          status: "accepted",
          message_id: earlier.record.messageId,
          conversation_id: earlier.record.conversationId,
        };
      }
      if (earlier !== undefined) {
        throw new ChannelError(
          "request_in_progress",
          "A request with this Idempotency-Key is still being accepted; retry shortly.",
          { status: 409, retryable: true, retryAfterSeconds: 1 },
        );
      }
      queued = { ...queued, idempotencyKey };
    }
    try {
      await guard(unavailable, () => queue.enqueue(queued));
    } catch (error) {
      if (idempotencyKey !== undefined) {
        await idempotency?.release(name, idempotencyKey).catch((releaseError: unknown) => {
          logger.error("cannot release an idempotency key", { channel: name, error: errorMessage(releaseError) });
        });
      }
      throw error;
    }
    if (idempotencyKey !== undefined) {
      // The message is queued and its 200 is owed whatever happens here; a key left pending
      // expires with its lease.
      await idempotency?.commit(name, idempotencyKey, clock.now()).catch((commitError: unknown) => {
        logger.error("cannot commit an idempotency key", { channel: name, error: errorMessage(commitError) });
      });
    }
    if (logger.enabled("debug")) {
      logger.debug("message accepted", { channel: name, message_id: queued.id, text: message.text });
    }
    return { status: "accepted", message_id: queued.id, conversation_id: message.conversationId };
  };
}

/** The 503 of a service that is stopping. */
export function shuttingDownError(retryAfterSeconds: number): ChannelError {
  return new ChannelError("shutting_down", "The service is shutting down; retry shortly.", {
    status: 503,
    retryable: true,
    retryAfterSeconds,
  });
}

/** Runs `work`; a failure that is not already a ChannelError becomes `fallback(error)`. */
async function guard<T>(fallback: (error: unknown) => ChannelError, work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    throw isChannelError(error) ? error : fallback(error);
  }
}

function readIdempotencyKey(header: string | null, store: IdempotencyStore | undefined): string | undefined {
  if (header === null || store === undefined) return undefined;
  if (header.length === 0 || header.length > MAX_IDEMPOTENCY_KEY_LENGTH) {
    const field = "Idempotency-Key";
    throw new ChannelError(
      "invalid_message",
      `The ${field} header must be 1 to ${MAX_IDEMPOTENCY_KEY_LENGTH} characters.`,
      {
        status: 400,
        errors: [{ field, message: `must be 1 to ${MAX_IDEMPOTENCY_KEY_LENGTH} characters` }],
      },
    );
  }
  return header;
}
