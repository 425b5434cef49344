import { errorMessage } from "../channel-error.js";
import type { ClientTls } from "./client-tls.js";
import { type Poster, type PostResult, postFailed, tlsUnsupported } from "./poster.js";

/** The `fetch` of a platform binding by name (Workers' mTLS certificate bindings), or undefined. */
export type BindingFetch = (binding: string) => typeof fetch | undefined;

/**
 * A Poster on the platform's `fetch` (Workers, or any runtime without a faster client). A
 * channel whose `webhook.tls` names an mTLS binding posts through that binding's `fetch`, which
 * presents its certificate; PEM texts cannot be used by `fetch`, so a channel that has only
 * those fails its attempts, not retried (the Worker refuses such a configuration at start).
 */
export function createFetchPoster(fetchImpl: typeof fetch = fetch, bindingFetch?: BindingFetch): Poster {
  const fetchFor = (url: string, tls: ClientTls | undefined): typeof fetch => {
    if (tls === undefined) return fetchImpl;
    if (tls.binding === undefined)
      throw tlsUnsupported(url, "fetch presents a client certificate only through an mTLS binding (tls.mtls_binding)");
    const bound = bindingFetch?.(tls.binding);
    if (bound === undefined) throw tlsUnsupported(url, `there is no mTLS certificate binding named ${tls.binding}`);
    return bound;
  };
  return {
    async post(url, body, headers, timeoutMs, tls): Promise<PostResult> {
      const post = fetchFor(url, tls);
      let response: Response;
      try {
        response = await post(url, {
          method: "POST",
          body,
          headers,
          redirect: "manual",
          signal: AbortSignal.timeout(timeoutMs),
        });
      } catch (error) {
        const timedOut = error instanceof DOMException && error.name === "TimeoutError";
        throw postFailed(url, timeoutMs, timedOut ? undefined : errorMessage(error), error);
      }
      // The body is not needed; releasing it frees the connection for reuse.
      await response.body?.cancel().catch(() => undefined);
      return { status: response.status, retryAfter: response.headers.get("retry-after") };
    },
  };
}
