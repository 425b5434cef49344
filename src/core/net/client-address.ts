/**
 * The address of the client a request came from. The socket's peer, unless the peer is a
 * trusted proxy: then the right-most `X-Forwarded-For` entry that is not a trusted proxy,
 * walking leftwards past the trusted ones. Entries left of that are whatever the client
 * claimed and are never believed. When every entry is trusted, the left-most one is taken.
 * Null when the peer is unknown.
 */
export function resolveClientAddress(
  peer: string | null,
  forwardedFor: string | null,
  isTrusted: (address: string) => boolean,
): string | null {
  if (peer === null || forwardedFor === null || !isTrusted(peer)) return peer;
  const entries = forwardedFor.split(",");
  let client = peer;
  for (let index = entries.length - 1; index >= 0; index -= 1) {
    const entry = bareAddress((entries[index] ?? "").trim());
    if (entry === "") continue;
    client = entry;
    if (!isTrusted(entry)) break;
  }
  return client;
}

/** An entry without the port some proxies add: `[2001:db8::1]:443` and `192.0.2.1:80` alike. */
function bareAddress(entry: string): string {
  if (entry.startsWith("[")) {
    const end = entry.indexOf("]");
    return end === -1 ? entry : entry.slice(1, end);
  }
  const colon = entry.indexOf(":");
  // One colon is IPv4 with a port; more are IPv6, which has no port without brackets.
  return colon !== -1 && colon === entry.lastIndexOf(":") ? entry.slice(0, colon) : entry;
}
