import { isIpv4, parseIp } from "../net/ip-address.js";

/**
 * A parsed `host:port` listener address. `host` has no IPv6 brackets and is in the URL parser's
 * canonical form: an IPv4 address dotted (`127.1` is `127.0.0.1`), an IPv6 address compressed
 * and lower-case (`0:0:0:0:0:0:0:1` is `::1`, an IPv4-mapped one its IPv4 address), a name
 * lower-case.
 */
export interface BindAddress {
  readonly host: string;
  readonly port: number;
}

const BIND = /^(?:\[([0-9A-Fa-f:.]+)\]|([A-Za-z0-9.-]+)):(\d{1,5})$/;
const HOST = /^(?:\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9.-]+)$/;

/** The IPv4 wildcard: every IPv4 address of the machine. */
export const IPV4_ANY = "0.0.0.0";
/** The IPv6 wildcard: every address, IPv4 ones included (Node listens dual-stack). */
export const IPV6_ANY = "::";

/**
 * Parses `host:port` (IPv6 as `[::1]:8090`); returns undefined when the text is not one, or when
 * the URL parser refuses its host. The host comes back canonical, so that the service listens
 * on the very address the checks judged, whatever the resolver would make of another spelling.
 */
export function parseBind(text: string): BindAddress | undefined {
  const match = BIND.exec(text);
  if (match === null) return undefined;
  const port = Number(match[3]);
  if (!Number.isInteger(port) || port > 65535) return undefined;
  const bracketed = match[1];
  if (bracketed !== undefined && !bracketed.includes(":")) return undefined;
  const host = canonicalHost(bracketed === undefined ? (match[2] ?? "") : `[${bracketed}]`);
  return host === undefined ? undefined : { host, port };
}

/**
 * True for addresses that never leave the machine: 127.0.0.0/8, ::1 and `localhost`, in every
 * spelling the URL parser reads as one of them. Anything else may carry the Bearer secret over a
 * network in cleartext.
 */
export function isLoopbackHost(host: string): boolean {
  const canonical = canonicalHost(host.includes(":") && !host.startsWith("[") ? `[${host}]` : host);
  if (canonical === undefined) return false;
  return canonical === "localhost" || canonical === "::1" || /^127\.\d+\.\d+\.\d+$/.test(canonical);
}

/**
 * The socket a bind means, for comparing binds: every spelling of an address is one, and
 * `localhost` is `127.0.0.1`. Channels with the same key share one server.
 */
export function bindKey(text: string): string {
  const parsed = parseBind(text);
  if (parsed === undefined) return text;
  const host = socketHost(parsed.host);
  return `${host.includes(":") ? `[${host}]` : host}:${parsed.port}`;
}

/** The address a canonical bind host listens on, for comparing sockets: `localhost` is `127.0.0.1`. */
export function socketHost(host: string): string {
  return host === "localhost" ? "127.0.0.1" : host;
}

/**
 * `host` (IPv6 in brackets) as the URL parser writes it, brackets dropped and an IPv4-mapped
 * IPv6 address written as its IPv4 address, which is the socket it takes; undefined when the
 * URL parser refuses it.
 */
function canonicalHost(host: string): string | undefined {
  // Only a host: anything more (a path, a user) would be parsed away into another host.
  if (!HOST.test(host)) return undefined;
  const url = `http://${host}/`;
  if (!URL.canParse(url)) return undefined;
  const { hostname } = new URL(url);
  if (!hostname.startsWith("[")) return hostname;
  const ipv6 = hostname.slice(1, -1);
  const bytes = parseIp(ipv6);
  return bytes !== undefined && isIpv4(bytes) ? bytes.subarray(12).join(".") : ipv6;
}
