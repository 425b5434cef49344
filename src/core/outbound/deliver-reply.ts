import { ChannelError } from "../channel-error.js";
import type { Clock } from "../clock.js";
import { parseRetryAfterMs } from "../lifecycle/retry-policy.js";
import { redactUrl } from "../log/redact-url.js";
import { VERSION } from "../version.js";
import type { ClientTls } from "./client-tls.js";
import type { Poster } from "./poster.js";

/**
 * Statuses after which the same request may succeed later: the receiver's own trouble (5xx,
 * 408 Request Timeout, 429 Too Many Requests, 425 Too Early) or a conflict that passes (409,
 * as a receiver that is itself still accepting the same message answers). Any other 4xx is the
 * message's own failure.
 */
export function isRetryableStatus(status: number): boolean {
  return status === 408 || status === 409 || status === 425 || status === 429 || status >= 500;
}

/** Headers every reply carries; built once per channel. */
export function baseReplyHeaders(): Readonly<Record<string, string>> {
  return { "content-type": "application/json", "user-agent": `webhook-channel/${VERSION}` };
}

/** One delivery attempt of a rendered reply; `headers` are complete (ids, signature). */
export interface DeliveryAttempt {
  readonly url: string;
  readonly body: string;
  readonly headers: Readonly<Record<string, string>>;
  readonly timeoutMs: number;
  /** The channel's `webhook.tls`, when it has one. */
  readonly tls?: ClientTls | undefined;
}

/**
 * POSTs one reply. Resolves with the status on any 2xx; otherwise throws a ChannelError (`delivery_failed`)
 * whose `retryable` follows the status (3xx is a failure: redirects are never followed).
 */
export async function deliverReply(poster: Poster, attempt: DeliveryAttempt, clock: Clock): Promise<number> {
  const result = await poster.post(attempt.url, attempt.body, attempt.headers, attempt.timeoutMs, attempt.tls);
  const { status } = result;
  if (status >= 200 && status < 300) return status;
  const retryAfterMs = parseRetryAfterMs(result.retryAfter, clock.now());
  throw new ChannelError("delivery_failed", `outbound_url answered ${status}`, {
    retryable: isRetryableStatus(status),
    upstreamStatus: status,
    url: redactUrl(attempt.url),
    ...(retryAfterMs === undefined ? {} : { retryAfterMs }),
  });
}
