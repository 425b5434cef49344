import { createServer, type Server } from "node:http";
import { getRequestListener } from "@hono/node-server";
import type { AcceptMessage } from "../../core/app/accept-message.js";
import { type AppDeps, createAccepts, createApp } from "../../core/app/create-app.js";
import { bindKey, parseBind } from "../../core/config/bind-address.js";
import type { ChannelConfig } from "../../core/config/config-schema.js";
import { channelName } from "../../core/config/validate-config.js";
import { createInboundListener } from "./inbound-listener.js";

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
 * calling the same accept flows. `appDeps` gives everything but the channels.
 */
export function buildListeners(
  channels: readonly ChannelConfig[],
  appDeps: Omit<AppDeps, "channels">,
): PlannedListener[] {
  const groups = new Map<string, ChannelConfig[]>();
  for (const channel of channels) {
    const key = bindKey(channel.webhook.bind);
    const group = groups.get(key);
    if (group === undefined) groups.set(key, [channel]);
    else group.push(channel);
  }
  return [...groups.values()].map((group) => {
    const bind = group[0]?.webhook.bind ?? "";
    const address = parseBind(bind);
    if (address === undefined) throw new Error(`invalid bind ${bind}`);
    const deps: AppDeps = { ...appDeps, channels: group };
    const accepts = createAccepts(deps);
    const byPath = new Map<string, AcceptMessage>();
    for (const channel of group) {
      const accept = accepts.get(channelName(channel));
      if (accept !== undefined) byPath.set(channel.webhook.path, accept);
    }
    const app = createApp(deps, accepts);
    const server = createServer(createInboundListener(byPath, getRequestListener(app.fetch), deps.logger));
    // Bounds against slow or stalled clients (slowloris): all headers within 10 s, the
    // whole request within 30 s, idle keep-alive sockets closed after 5 s.
    server.headersTimeout = 10_000;
    server.requestTimeout = 30_000;
    server.keepAliveTimeout = 5_000;
    return { host: address.host, port: address.port, bind, channels: group, server };
  });
}
