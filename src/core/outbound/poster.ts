import { ChannelError } from "../channel-error.js";
import { redactUrl } from "../log/redact-url.js";
/** What the delivery code needs to know of an HTTP answer. */
export interface PostResult {
  readonly status: number;
  /** The raw `Retry-After` header, if any. */
  readonly retryAfter: string | null;
}

/**
 * The outbound HTTP port: one POST, no redirects followed, bounded by `timeoutMs`.
 * Network failures and timeouts reject with a retryable ChannelError (`delivery_failed`).
 * On Workers this is `fetch`; the Node adapter injects a keep-alive client, which is
 * several times faster than Node's global fetch.
 */
export interface Poster {
  post(url: string, body: string, headers: Readonly<Record<string, string>>, timeoutMs: number): Promise<PostResult>;
}

/**
 * The retryable `delivery_failed` of a POST that got no answer: a timeout, or a network error
 * described by `reason` (each client knows best how to describe its own errors).
 */
export function postFailed(url: string, timeoutMs: number, reason: string | undefined, cause: unknown): ChannelError {
  const timedOut = reason === undefined;
  return new ChannelError(
    "delivery_failed",
    timedOut ? `no answer within ${timeoutMs} ms` : `request failed: ${reason}`,
    {
      retryable: true,
      url: redactUrl(url),
      timedOut,
      cause,
    },
  );
}
