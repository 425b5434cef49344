import { Hono } from "hono";
import type { Clock, IdGenerator } from "../clock/clock.js";
import type { ChannelConfig } from "../config/config-schema.js";
import { HEALTH_PATH } from "../config/config-schema.js";
import { channelName } from "../config/validate-config.js";
import { ChannelError, errorMessage, isChannelError } from "../errors/channel-error.js";
import { problemResponse } from "../http/problem-response.js";
import { MAX_BODY_BYTES, readLimitedBody } from "../http/read-limited-body.js";
import type { IdempotencyStore } from "../idempotency/idempotency-store.js";
import type { Logger } from "../log/logger.js";
import type { Queue } from "../queue/queue.js";
import { type AcceptMessage, createAcceptMessage, shuttingDownError } from "./accept-message.js";

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
export function createApp(deps: AppDeps, accepts: ReadonlyMap<string, AcceptMessage> = createAccepts(deps)): Hono {
  const { logger } = deps;
  const retryAfterSeconds = deps.retryAfterSeconds ?? 5;
  const isShuttingDown = deps.isShuttingDown ?? (() => false);
  const app = new Hono();

  app.get(HEALTH_PATH, (c) => {
    if (isShuttingDown()) return problemResponse(shuttingDownError(retryAfterSeconds));
    return c.json({ status: "ok" });
  });
  app.all(HEALTH_PATH, () => methodNotAllowed("GET, HEAD"));

  for (const channel of deps.channels) {
    const accept = accepts.get(channelName(channel));
    if (accept === undefined) throw new Error(`no accept flow for channel ${channelName(channel)}`);
    app.post(channel.webhook.path, async (c) => {
      const request = c.req.raw;
      const { headers } = request;
      const head = {
        authorization: headers.get("authorization"),
        contentType: headers.get("content-type"),
        idempotencyKey: headers.get("idempotency-key"),
      };
      accept.checkHead(head);
      const body = await readLimitedBody(request, MAX_BODY_BYTES);
      return c.json(await accept.acceptBody(head, body));
    });
    app.all(channel.webhook.path, () => methodNotAllowed("POST"));
  }

  app.notFound(() => problemResponse(notFoundError()));
  app.onError((error) => {
    if (isChannelError(error)) {
      if (logger.enabled("debug")) logger.debug("request rejected", { code: error.code, status: error.status });
      return problemResponse(error);
    }
    logger.error("unexpected error while handling a request", { error: errorMessage(error) });
    return problemResponse(new ChannelError("internal_error", "An unexpected error occurred.", { status: 500 }));
  });
  return app;
}

/**
 * The accept flow of every channel of `deps`, by channel name. `createApp` builds them when
 * not given; the Node adapter builds them once and hands the same ones to its fast path.
 */
export function createAccepts(deps: AppDeps): Map<string, AcceptMessage> {
  return new Map(
    deps.channels.map((channel) => {
      const name = channelName(channel);
      const accept = createAcceptMessage(channel, {
        secret: deps.secretFor(name),
        queue: deps.queueFor(name),
        clock: deps.clock,
        newId: deps.newId,
        logger: deps.logger,
        ...(deps.idempotency === undefined ? {} : { idempotency: deps.idempotency }),
        isShuttingDown: deps.isShuttingDown ?? (() => false),
        retryAfterSeconds: deps.retryAfterSeconds ?? 5,
      });
      return [name, accept];
    }),
  );
}

/** The 404 of a path that no route serves. */
function notFoundError(): ChannelError {
  return new ChannelError("not_found", "No endpoint is served at this path.", { status: 404 });
}

function methodNotAllowed(allow: string): Response {
  return problemResponse(new ChannelError("method_not_allowed", `This path answers ${allow} only.`, { status: 405 }), {
    allow,
  });
}
