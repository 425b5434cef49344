import { Hono } from "hono";
import type { Clock, IdGenerator } from "../clock/clock.js";
import type { ChannelConfig } from "../config/config-schema.js";
import { HEALTH_PATH } from "../config/config-schema.js";
import { resolveMapping } from "../config/message-fields.js";
import { channelName } from "../config/validate-config.js";
import { ChannelError, errorMessage, isChannelError } from "../errors/channel-error.js";
import { problemResponse } from "../http/problem-response.js";
import { MAX_BODY_BYTES, readLimitedBody } from "../http/read-limited-body.js";
import { checkBearer, checkJsonContentType, parseJsonObject } from "../http/request-checks.js";
import { type IdempotencyStore, MAX_IDEMPOTENCY_KEY_LENGTH } from "../idempotency/idempotency-store.js";
import type { Logger } from "../log/logger.js";
import type { QueuedMessage } from "../message/inbound-message.js";
import { parseMessage } from "../message/parse-message.js";
import type { Queue } from "../queue/queue.js";

/** What the HTTP app is built from. Everything runtime-specific comes in here. */
export interface AppDeps {
  /** The channels this app serves (on Node: those sharing one bind). */
  readonly channels: readonly ChannelConfig[];
  /** The inbound secret of a channel, looked up when the app is built. */
  readonly secretFor: (channel: string) => string;
  /** The queue that takes a channel's accepted messages. */
  readonly queueFor: (channel: string) => Queue;
  readonly clock: Clock;
  readonly newId: IdGenerator;
  readonly logger: Logger;
  /** Remembers `Idempotency-Key`s; without it the header is ignored. */
  readonly idempotency?: IdempotencyStore;
  /** True once shutdown began: new inbound requests are refused with 503. */
  readonly isShuttingDown?: () => boolean;
  /** Seconds a client is told to wait after a 503. Default 5. */
  readonly retryAfterSeconds?: number;
}

/**
 * Builds the Hono app: `GET /healthz` and one `POST` route per channel, running the
 * contract's checks in order (auth, media type, size, JSON, message, buffer). Every error
 * leaves as `application/problem+json`.
 */
export function createApp(deps: AppDeps): Hono {
  const { clock, logger, newId } = deps;
  const retryAfterSeconds = deps.retryAfterSeconds ?? 5;
  const shuttingDown = deps.isShuttingDown ?? (() => false);
  const shutdownError = () =>
    new ChannelError("shutting_down", "The service is shutting down; retry shortly.", {
      status: 503,
      retryable: true,
      retryAfterSeconds,
    });
  const unavailable = (error: unknown): ChannelError => {
    logger.error("cannot accept a message: a store is unavailable", { error: errorMessage(error) });
    return new ChannelError("buffer_full", "The message could not be accepted right now; retry shortly.", {
      status: 503,
      retryable: true,
      retryAfterSeconds,
    });
  };
  const app = new Hono();

  app.get(HEALTH_PATH, (c) => {
    if (shuttingDown()) return problemResponse(shutdownError());
    return c.json({ status: "ok" });
  });
  app.all(HEALTH_PATH, () => methodNotAllowed("GET, HEAD"));

  for (const channel of deps.channels) {
    const name = channelName(channel);
    const secret = deps.secretFor(name);
    const queue = deps.queueFor(name);
    const keys = resolveMapping(channel.webhook.mapping);

    app.post(channel.webhook.path, async (c) => {
      if (shuttingDown()) return problemResponse(shutdownError());
      const request = c.req.raw;
      checkBearer(request.headers.get("authorization"), secret);
      checkJsonContentType(request.headers.get("content-type"));
      const body = parseJsonObject(await readLimitedBody(request, MAX_BODY_BYTES));
      const message = parseMessage(body, keys);
      const idempotencyKey = readIdempotencyKey(request.headers.get("idempotency-key"), deps.idempotency);
      let queued: QueuedMessage = { id: newId(), channel: name, receivedAt: clock.now(), message };
      if (idempotencyKey !== undefined && deps.idempotency !== undefined) {
        const earlier = await guard(unavailable, () =>
          deps.idempotency?.reserve(
            name,
            idempotencyKey,
            { messageId: queued.id, conversationId: message.conversationId },
            queued.receivedAt,
          ),
        );
        if (earlier?.committed === true) {
          const { record } = earlier;
          return c.json({ status: "accepted", message_id: record.messageId, conversation_id: record.conversationId });
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
          await deps.idempotency?.release(name, idempotencyKey).catch((releaseError: unknown) => {
            logger.error("cannot release an idempotency key", { channel: name, error: errorMessage(releaseError) });
          });
        }
        throw error;
      }
      if (idempotencyKey !== undefined) {
        // The message is queued and its 200 is owed whatever happens here; a key left
        // pending expires with its lease.
        await deps.idempotency?.commit(name, idempotencyKey, clock.now()).catch((commitError: unknown) => {
          logger.error("cannot commit an idempotency key", { channel: name, error: errorMessage(commitError) });
        });
      }
      if (logger.enabled("debug")) {
        logger.debug("message accepted", { channel: name, message_id: queued.id, text: message.text });
      }
      return c.json({ status: "accepted", message_id: queued.id, conversation_id: message.conversationId });
    });
    app.all(channel.webhook.path, () => methodNotAllowed("POST"));
  }

  app.notFound(() =>
    problemResponse(new ChannelError("not_found", "No endpoint is served at this path.", { status: 404 })),
  );
  app.onError((error) => {
    if (isChannelError(error)) {
      if (error.status === 401) {
        return problemResponse(error, { "www-authenticate": 'Bearer realm="webhook-channel"' });
      }
      if (logger.enabled("debug")) logger.debug("request rejected", { code: error.code, status: error.status });
      return problemResponse(error);
    }
    logger.error("unexpected error while handling a request", { error: errorMessage(error) });
    return problemResponse(new ChannelError("internal_error", "An unexpected error occurred.", { status: 500 }));
  });
  return app;
}

/** Runs `work`; a failure that is not already a ChannelError becomes `fallback(error)`. */
async function guard<T>(
  fallback: (error: unknown) => ChannelError,
  work: () => Promise<T> | undefined,
): Promise<T | undefined> {
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

function methodNotAllowed(allow: string): Response {
  return problemResponse(new ChannelError("method_not_allowed", `This path answers ${allow} only.`, { status: 405 }), {
    allow,
  });
}
