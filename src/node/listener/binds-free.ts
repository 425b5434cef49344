import { createServer } from "node:net";
import { bindKey, parseBind } from "../../core/config/bind-address.js";
import type { ChannelConfig } from "../../core/config/config-schema.js";
import { listen } from "./listen.js";

/**
 * Listens once on every fixed address the channels bind, and lets go at once: a start that
 * cannot listen fails here, before it opens the state. Opening `state_dir` claims the file, so a
 * second start of the same service (the address held by the first) would otherwise fence the
 * running one off its own file, and then fail. Port 0 always gets a port: nothing to try.
 */
export async function checkBindsFree(channels: readonly ChannelConfig[]): Promise<void> {
  const tried = new Set<string>();
  for (const channel of channels) {
    const key = bindKey(channel.webhook.bind);
    const address = parseBind(channel.webhook.bind);
    if (tried.has(key) || address === undefined || address.port === 0) continue;
    tried.add(key);
    const probe = createServer();
    await listen(probe, address.host, address.port);
    await new Promise<void>((resolve) => probe.close(() => resolve()));
  }
}
