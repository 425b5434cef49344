import { isLoopbackHost } from "../../core/config/bind-address.js";
import { channelName } from "../../core/config/validate-config.js";
import type { Logger } from "../../core/log/logger.js";
import { redactUrl } from "../../core/log/redact-url.js";
import type { PlannedListener } from "./build-listeners.js";
import { listen } from "./listen.js";

/** One listening socket and the channels it serves. */
export interface Listener {
  readonly host: string;
  readonly port: number;
  readonly channels: readonly string[];
}

/**
 * The last step of a start: every listener listens, warns when its bind is not loopback, and
 * says where each channel is served.
 */
export async function serveListeners(planned: readonly PlannedListener[], logger: Logger): Promise<Listener[]> {
  const listeners: Listener[] = [];
  for (const { bind, channels, host, port: wanted, server } of planned) {
    const port = await listen(server, host, wanted);
    listeners.push({ host, port, channels: channels.map(channelName) });
    if (!isLoopbackHost(host)) {
      logger.warn(
        "bind is not loopback: the Bearer secret would cross the network in cleartext; put a TLS-terminating proxy in front and bind to 127.0.0.1",
        { bind },
      );
    }
    for (const channel of channels) {
      logger.info("listening", {
        channel: channelName(channel),
        bind,
        path: channel.webhook.path,
        url: `http://${host.includes(":") ? `[${host}]` : host}:${port}${channel.webhook.path}`,
        outbound_url: redactUrl(channel.webhook.outbound_url),
      });
    }
  }
  return listeners;
}
