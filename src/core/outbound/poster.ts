import { ChannelError } from "../channel-error.js";
import { redactUrl } from "../log/redact-url.js";
import type { ClientTls } from "./client-tls.js";

/** What the delivery code needs to know of an HTTP answer. */
export interface PostResult {
  readonly status: number;
  /** The raw `Retry-After` header, if any. */
  readonly retryAfter: string | null;
}

/**
 * The outbound HTTP port: one POST, no redirects followed, bounded by `timeoutMs`, with the
 * channel's `tls` (a client certificate, a CA) when it has one. Network failures and timeouts
 * reject with a retryable ChannelError (`delivery_failed`); TLS settings a runtime cannot use
 * reject with one that is not retryable. On Workers this is `fetch` (or an mTLS binding's);
 * the Node adapter injects a keep-alive client, which is several times faster than Node's
 * global fetch.
 */
export interface Poster {
  post(
    url: string,
    body: string,
    headers: Readonly<Record<string, string>>,
    timeoutMs: number,
    tls?: ClientTls,
  ): Promise<PostResult>;
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

/** The `delivery_failed` of a channel whose `webhook.tls` this runtime cannot carry out: not retried. */
export function tlsUnsupported(url: string, reason: string): ChannelError {
  return new ChannelError("delivery_failed", `webhook.tls cannot be used here: ${reason}`, {
    retryable: false,
    url: redactUrl(url),
  });
}
