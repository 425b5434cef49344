/** A parsed `host:port` listener address. `host` has no IPv6 brackets. */
export interface BindAddress {
  readonly host: string;
  readonly port: number;
}

const BIND = /^(?:\[([0-9A-Fa-f:.]+)\]|([A-Za-z0-9.-]+)):(\d{1,5})$/;

/** Parses `host:port` (IPv6 as `[::1]:8090`); returns undefined when the text is not one. */
export function parseBind(text: string): BindAddress | undefined {
  const match = BIND.exec(text);
  if (match === null) return undefined;
  const host = match[1] ?? match[2];
  const port = Number(match[3]);
  if (host === undefined || !Number.isInteger(port) || port > 65535) return undefined;
  if (match[1] !== undefined && !match[1].includes(":")) return undefined;
  return { host, port };
}

/**
 * True for addresses that never leave the machine: 127.0.0.0/8, ::1 and `localhost`.
 * Anything else may carry the Bearer secret over a network in cleartext.
 */
export function isLoopbackHost(host: string): boolean {
  const lower = host.toLowerCase();
  if (lower === "localhost" || lower === "::1" || lower === "0:0:0:0:0:0:0:1") return true;
  const v4 = /^127\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/.exec(lower);
  return v4?.slice(1).every((octet) => Number(octet) <= 255) ?? false;
}

/**
 * The socket a bind means, for comparing binds: `localhost` and `127.0.0.1` are one host,
 * and case does not matter. Channels with the same key share one server.
 */
export function bindKey(text: string): string {
  const parsed = parseBind(text);
  if (parsed === undefined) return text;
  const host = parsed.host.toLowerCase() === "localhost" ? "127.0.0.1" : parsed.host.toLowerCase();
  return `${host}:${parsed.port}`;
}
