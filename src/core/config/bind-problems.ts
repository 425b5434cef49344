import { type BindAddress, bindKey, IPV4_ANY, IPV6_ANY, parseBind, socketHost } from "./bind-address.js";
import type { ConfigProblem } from "./config-problem.js";
import type { ChannelConfig } from "./config-schema.js";

const DOTTED_IPV4 = /^\d+\.\d+\.\d+\.\d+$/;

/**
 * Problems of the channels' binds taken together, found here rather than by a start that fails
 * to listen: two channels on one address (however it is spelled) and path, and two binds on
 * one port that cannot both listen because one is a wildcard that takes the other's address.
 */
export function bindProblems(channels: readonly ChannelConfig[]): ConfigProblem[] {
  const problems: ConfigProblem[] = [];
  const endpoints = new Map<string, number>();
  const addresses = channels.map((channel) => parseBind(channel.webhook.bind));
  channels.forEach((channel, index) => {
    const { bind, path } = channel.webhook;
    const endpoint = `${bindKey(bind)} ${path}`;
    const same = endpoints.get(endpoint);
    if (same !== undefined) {
      const other = channels[same]?.webhook.bind ?? bind;
      problems.push({
        path: `channels[${index}].webhook.path`,
        message: `bind ${bind} and path ${path} are already used by channels[${same}]${other === bind ? "" : ` (its bind ${other} is the same address)`}`,
        fix: "give this channel another path or another bind",
      });
    } else endpoints.set(endpoint, index);
    const address = addresses[index];
    if (address === undefined) return;
    const earlier = addresses.findIndex((other, at) => at < index && wildcardOf(other, address) !== undefined);
    const wildcard = wildcardOf(addresses[earlier], address);
    if (wildcard === undefined) return;
    problems.push({
      path: `channels[${index}].webhook.bind`,
      message: `${bind} cannot listen beside ${channels[earlier]?.webhook.bind} of channels[${earlier}].webhook.bind: ${wildcard}`,
      fix: "give one of the two channels another port, or the same bind as the other (channels with one bind share its listener)",
    });
  });
  return problems;
}

/**
 * Why `a` and `b` cannot both listen, naming the wildcard that takes the other's address; undefined
 * when they can, or when they are one socket (their channels share a listener). Port 0 is a
 * port of its own for every bind.
 */
function wildcardOf(a: BindAddress | undefined, b: BindAddress): string | undefined {
  if (a === undefined || a.port !== b.port || a.port === 0) return undefined;
  const [first, second] = [socketHost(a.host), socketHost(b.host)];
  if (first === second) return undefined;
  if (first === IPV6_ANY || second === IPV6_ANY) {
    return `[::] listens on every address, IPv4 and IPv6, of port ${a.port}`;
  }
  // Only an address written as IPv4 is known to be one: `localhost` may listen on ::1 (the
  // first address the resolver gives), which takes nothing from 0.0.0.0.
  const ipv4Wildcard =
    (first === IPV4_ANY && DOTTED_IPV4.test(b.host)) || (second === IPV4_ANY && DOTTED_IPV4.test(a.host));
  return ipv4Wildcard ? `${IPV4_ANY} listens on every IPv4 address of port ${a.port}` : undefined;
}
