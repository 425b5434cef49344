import { Hono } from "hono";
import { type AdminDeps, mountAdminRoutes } from "../admin/admin-routes.js";
import type { AuthFailureLimiter } from "../auth-limit/auth-failure-limiter.js";
import type { MemoryAuthFailureLimiter } from "../auth-limit/memory-auth-failure-limiter.js";
import { noopAuthFailureLimiter } from "../auth-limit/noop-auth-failure-limiter.js";
import { ChannelError } from "../channel-error.js";
import type { Clock, IdGenerator } from "../clock.js";
import type { ChannelConfig } from "../config/config-schema.js";
import { HEALTH_PATH, METRICS_PATH, READY_PATH } from "../config/config-schema.js";
import { channelName } from "../config/validate-config.js";
import { readLimitedBody } from "../http/body-limit.js";
import { problemFor } from "../http/problem-for.js";
import { problemResponse } from "../http/problem-response.js";
import type { IdempotencyStore } from "../idempotency/idempotency-store.js";
import type { Logger } from "../log/logger.js";
import type { Metrics } from "../metrics/metrics.js";
import type { TimelineRecorder } from "../timeline/timeline-recorder.js";
import { type AcceptMessage, createAcceptMessage } from "./accept-message.js";
import type { InboundQueue } from "./inbound-queue.js";
import { type Readiness, shutdownReadiness } from "./readiness.js";
import { notFoundError, shuttingDownError } from "./refusals.js";

/** What the HTTP app is built from. Everything runtime-specific comes in here. */
export interface AppDeps {
  /** The channels this app serves (on Node: those sharing one bind). */
  readonly channels: readonly ChannelConfig[];
  /**
   * The inbound secrets of a channel (two while rotating). Asked on every request, never kept,
   * so that a reload that changes what it returns applies to the next request.
   */
  readonly secretsFor: (channel: string) => readonly string[];
  /** The queue that takes a channel's accepted messages. */
  readonly queueFor: (channel: string) => InboundQueue;
  readonly clock: Clock;
  readonly newId: IdGenerator;
  readonly logger: Logger;
  /** Remembers `Idempotency-Key`s; without it the header is ignored. */
  readonly idempotency?: IdempotencyStore | undefined;
  /** True once shutdown began: new inbound requests are refused with 503. */
  readonly isShuttingDown?: () => boolean;
  /** Counts failed authentications per client address; without it nothing is refused for them. */
  readonly authFailures?: AuthFailureLimiter;
  /**
   * The process's (or isolate's) own count of failed authentications, in front of an
   * `authFailures` shared with other replicas or isolates (see `CredentialsCheckDeps`).
   */
  readonly localAuthFailures?: MemoryAuthFailureLimiter | undefined;
  /**
   * The peer a request came from, as the runtime knows it (`env` is what the server hands to
   * Hono): the socket's address on Node, `CF-Connecting-IP` on Workers. Without it the client
   * address is unknown and the auth-failure limit does not apply.
   */
  readonly peerAddress?: (request: Request, env: unknown) => string | null;
  /**
   * What `GET /readyz` reports (backlog, state store, shutdown); without it the answer says
   * only whether the service is stopping.
   */
  readonly readiness?: Readiness;
  /** Counts answers on the channels' paths and accepted messages; default records nothing. */
  readonly metrics?: Metrics | undefined;
  /**
   * Answers `GET /metrics` (the runtime's exposition, open like `/healthz`); without it the
   * path is a 404. The core never knows the format: the Node adapter hands in prom-client's.
   */
  readonly metricsEndpoint?: (() => Promise<Response>) | undefined;
  /**
   * The admin API (`/admin/dead-letters`), behind its own secret; without it every `/admin/`
   * path is a 404, as if it did not exist.
   */
  readonly admin?: AdminDeps | undefined;
  /** Where each accepted message's timeline begins; default nowhere. */
  readonly timeline?: TimelineRecorder | undefined;
}

/**
 * Builds the Hono app: `GET /healthz` and one `POST` route per channel, running the
 * contract's checks in order (auth, media type, size, JSON, message, buffer). Every error
 * leaves as `application/problem+json`.
 */
export function createApp(deps: AppDeps, accepts: ReadonlyMap<string, AcceptMessage> = createAccepts(deps)): Hono {
  const { logger } = deps;
  const isShuttingDown = deps.isShuttingDown ?? (() => false);
  const peerAddress = deps.peerAddress ?? (() => null);
  const app = new Hono();

  app.get(HEALTH_PATH, (c) => {
    if (isShuttingDown()) return problemResponse(shuttingDownError());
    return c.json({ status: "ok" });
  });
  app.all(HEALTH_PATH, () => methodNotAllowed("GET, HEAD"));
  const readiness = deps.readiness ?? shutdownReadiness(isShuttingDown);
  // Unlike /healthz (liveness), a 503 here only asks a load balancer to send elsewhere for now.
  app.get(READY_PATH, async (c) => {
    const report = await readiness.report();
    return c.json(report, report.status === "ready" ? 200 : 503, { "cache-control": "no-store" });
  });
  app.all(READY_PATH, () => methodNotAllowed("GET, HEAD"));
  const { metricsEndpoint } = deps;
  if (metricsEndpoint !== undefined) {
    app.get(METRICS_PATH, () => metricsEndpoint());
    app.all(METRICS_PATH, () => methodNotAllowed("GET, HEAD"));
  }

  if (deps.admin !== undefined) mountAdminRoutes(app, deps.admin, isShuttingDown);

  for (const channel of deps.channels) {
    const accept = accepts.get(channelName(channel));
    if (accept === undefined) throw new Error(`no accept flow for channel ${channelName(channel)}`);
    app.post(channel.webhook.path, async (c) => {
      // Answered here rather than by onError, so that every answer on the path is counted once.
      try {
        const request = c.req.raw;
        const head = accept.readHead((name) => request.headers.get(name), peerAddress(request, c.env));
        await accept.checkHead(head);
        const response = c.json(await accept.acceptBody(head, await readLimitedBody(request)));
        accept.answered(200);
        return response;
      } catch (error) {
        const problem = problemFor(error, logger, accept.channel);
        accept.answered(problem.status);
        return problemResponse(problem);
      }
    });
    app.all(channel.webhook.path, () => {
      accept.answered(405);
      return methodNotAllowed("POST");
    });
  }

  app.notFound(() => problemResponse(notFoundError()));
  app.onError((error) => problemResponse(problemFor(error, logger)));
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
        secrets: () => deps.secretsFor(name),
        authFailures: deps.authFailures ?? noopAuthFailureLimiter,
        localAuthFailures: deps.localAuthFailures,
        queue: deps.queueFor(name),
        clock: deps.clock,
        newId: deps.newId,
        logger: deps.logger,
        idempotency: deps.idempotency,
        isShuttingDown: deps.isShuttingDown ?? (() => false),
        metrics: deps.metrics,
        timeline: deps.timeline,
      });
      return [name, accept];
    }),
  );
}

function methodNotAllowed(allow: string): Response {
  return problemResponse(new ChannelError("method_not_allowed", `This path answers ${allow} only.`, { status: 405 }), {
    allow,
  });
}
