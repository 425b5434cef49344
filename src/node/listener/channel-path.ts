import { getPath } from "hono/utils/url";

/**
 * The channel path a request target names, or undefined: the target as sent (its query
 * dropped), or else as the Hono app would route it once the URL is normalized (dot segments,
 * percent-escapes, the absolute form `http://host/path`), so that every request for a channel
 * takes the fast path and gets its answers (`100 Continue`, a cut-short body, repeated
 * headers) whatever spelling of the path the client used. The second reading runs only for a
 * target that is not a channel path as sent.
 */
export function channelPathOf(target: string, isChannel: (path: string) => boolean): string | undefined {
  const query = target.indexOf("?");
  const path = query === -1 ? target : target.slice(0, query);
  if (isChannel(path)) return path;
  const routed = routedPath(target);
  return routed !== undefined && isChannel(routed) ? routed : undefined;
}

/** The path the router reads, built as `@hono/node-server` builds the request's URL. */
function routedPath(target: string): string | undefined {
  const absolute = target.startsWith("http://") || target.startsWith("https://");
  if (!absolute && !target.startsWith("/")) return undefined;
  try {
    return getPath(new Request(new URL(absolute ? target : `http://localhost${target}`)));
  } catch {
    // A target the URL parser refuses is answered by the fallback, as any other it cannot read.
    return undefined;
  }
}

/**
 * Reads a backslash in a request target's path as `/`, as the WHATWG URL parser does for `http:`
 * (and so workerd, before a Worker sees the request): `@hono/node-server` would answer such a
 * target with an empty 400 of its own instead. Rewrites `request.url` in place; a target without
 * one is left as it is, and the query keeps its backslashes.
 */
export function slashBackslashes(request: { url?: string | undefined }): void {
  const target = request.url;
  if (target === undefined || !target.includes("\\")) return;
  const query = target.indexOf("?");
  const path = query === -1 ? target : target.slice(0, query);
  request.url = path.replaceAll("\\", "/") + (query === -1 ? "" : target.slice(query));
}
