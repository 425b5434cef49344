import { createServer, type IncomingMessage, type Server } from "node:http";
import type { Socket } from "node:net";
import type { Duplex } from "node:stream";
import type { HttpBindings } from "@hono/node-server";
import { BULK_REPLAY, takesReplayBody } from "../../core/admin/admin-routes.js";
import type { AcceptMessage } from "../../core/app/accept-message.js";
import { type AppDeps, createAccepts, createApp } from "../../core/app/create-app.js";
import { createMemoryAuthFailureLimiter } from "../../core/auth-limit/memory-auth-failure-limiter.js";
import { bindKey, parseBind } from "../../core/config/bind-address.js";
import type { ChannelConfig } from "../../core/config/config-schema.js";
import { channelName } from "../../core/config/validate-config.js";
import type { Telemetry } from "../telemetry/telemetry.js";
import { tracedInbound } from "../telemetry/traced-inbound.js";
import { channelPathOf } from "./channel-path.js";
import { capConnections } from "./connection-cap.js";
import { headerOf } from "./header-of.js";
import { acceptOf, createInboundListener } from "./inbound-listener.js";
import { DEFAULT_LISTENER_LIMITS, type ListenerLimits } from "./listener-limits.js";
import { answerClientError, appListener } from "./protocol-refusals.js";

/** One HTTP server, not yet listening, and the channels it serves. */
export interface PlannedListener {
  readonly host: string;
  readonly port: number;
  readonly bind: string;
  readonly channels: readonly ChannelConfig[];
  readonly server: Server;
}

/**
 * Builds one HTTP server per distinct bind (channels that share a bind share a server): the
 * Node fast path for channel `POST`s in front of the Hono app for everything else, both
 * calling the same accept flows. `appDeps` gives everything but the channels; `limits` bound
 * slow clients (tests shorten them) and each server keeps at most
 * {@link maxConnectionsOf} its channels open connections. With `telemetry`, each channel `POST`
 * is a server span (see `tracedInbound`).
 */
export function buildListeners(
  channels: readonly ChannelConfig[],
  appDeps: Omit<AppDeps, "channels">,
  limits: ListenerLimits = DEFAULT_LISTENER_LIMITS,
  telemetry?: Telemetry,
): PlannedListener[] {
  const groups = new Map<string, ChannelConfig[]>();
  for (const channel of channels) {
    const key = bindKey(channel.webhook.bind);
    const group = groups.get(key);
    if (group === undefined) groups.set(key, [channel]);
    else group.push(channel);
  }
  // One limiter for every listener: its bound holds for the whole service. A shared one
  // (Postgres) answers later: the process's own count stands in front of it.
  const authFailures = appDeps.authFailures ?? createMemoryAuthFailureLimiter(appDeps.clock);
  const localAuthFailures =
    appDeps.authFailures === undefined ? undefined : createMemoryAuthFailureLimiter(appDeps.clock);
  return [...groups.values()].map((group) => {
    const bind = group[0]?.webhook.bind ?? "";
    const address = parseBind(bind);
    if (address === undefined) throw new Error(`invalid bind ${bind}`);
    const deps: AppDeps = { ...appDeps, channels: group, authFailures, localAuthFailures, peerAddress: socketPeer };
    const accepts = createAccepts(deps);
    const byPath = new Map<string, AcceptMessage>();
    const names = new Map<string, string>();
    for (const channel of group) {
      const accept = accepts.get(channelName(channel));
      if (accept !== undefined) byPath.set(channel.webhook.path, accept);
      names.set(channel.webhook.path, channelName(channel));
    }
    const app = createApp(deps, accepts);
    const fallback = appListener(app.fetch);
    const build = (fast: ReadonlyMap<string, AcceptMessage>) =>
      createInboundListener(fast, fallback, deps.logger, deps.isShuttingDown, adminReadsBody(deps));
    // Without telemetry the fast path is the plain one: nothing of tracing on the hot path.
    const inbound = telemetry === undefined ? build(byPath) : tracedInbound(byPath, names, build, telemetry);
    // Node checks the headers and request timeouts only every connectionsCheckingInterval,
    // which can be set only here; its 30 s default let drippers stay 30 s past the limits.
    // Without Host, Node would answer 400 itself with an empty body: the listener refuses it as a problem.
    const server = createServer(
      { connectionsCheckingInterval: limits.checkIntervalMs, requireHostHeader: false },
      inbound.onRequest,
    );
    // `Expect: 100-continue` is answered by the fast path, after the checks that need no body.
    server.on("checkContinue", inbound.onCheckContinue);
    // What Node refuses itself is answered as a problem too, as every other refusal.
    // Counted as the channel's answers, as every other on its path.
    server.on("checkExpectation", inbound.onCheckExpectation);
    server.on("clientError", (error: Error, socket: Duplex) => {
      const answer = answerClientError(error, socket as Socket);
      if (answer !== undefined) acceptOf(byPath, answer.method, answer.url)?.answered(answer.status);
    });
    server.headersTimeout = limits.headersTimeoutMs;
    server.requestTimeout = limits.requestTimeoutMs;
    server.keepAliveTimeout = limits.keepAliveTimeoutMs;
    capConnections(server, {
      bind,
      max: maxConnectionsOf(group),
      logger: deps.logger,
      now: () => deps.clock.now(),
      warnEveryMs: limits.refusalWarningIntervalMs,
    });
    return { host: address.host, port: address.port, bind, channels: group, server };
  });
}

/**
 * The connection cap of a listener: the largest `max_connections` of the channels sharing its
 * bind, so that no channel gets fewer connections than it asked for.
 */
export function maxConnectionsOf(channels: readonly ChannelConfig[]): number {
  return Math.max(...channels.map((channel) => channel.webhook.max_connections));
}

/**
 * Which requests the Hono app reads a body from, for `Expect: 100-continue`: an admin bulk replay
 * (however its path is spelled) that carries the admin secret; none without `admin`.
 */
function adminReadsBody(deps: AppDeps): (request: IncomingMessage) => boolean {
  const { admin } = deps;
  if (admin === undefined) return () => false;
  return (request) =>
    request.method === "POST" &&
    channelPathOf(request.url ?? "/", (path) => path === BULK_REPLAY) !== undefined &&
    takesReplayBody(headerOf(request, "authorization"), headerOf(request, "content-length"), admin.secret());
}

/** The socket peer of a request the Hono app serves (`env` is what @hono/node-server hands it). */
function socketPeer(_request: Request, env: unknown): string | null {
  return (env as Partial<HttpBindings> | undefined)?.incoming?.socket.remoteAddress ?? null;
}
