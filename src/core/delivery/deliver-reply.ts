import { ChannelError } from "../errors/channel-error.js";
import { VERSION } from "../version.js";
import { redactUrl } from "./fetch-poster.js";
import type { Poster } from "./poster.js";

/** Statuses after which the same request may succeed later. */
export function isRetryableStatus(status: number): boolean {
  return status === 408 || status === 425 || status === 429 || status >= 500;
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
}

/**
 * POSTs one reply. Resolves on any 2xx; otherwise throws a ChannelError (`delivery_failed`)
 * whose `retryable` follows the status (3xx is a failure: redirects are never followed).
 */
export async function deliverReply(poster: Poster, attempt: DeliveryAttempt): Promise<void> {
  const result = await poster.post(attempt.url, attempt.body, attempt.headers, attempt.timeoutMs);
  if (result.status >= 200 && result.status < 300) return;
  throw new ChannelError("delivery_failed", `outbound_url answered ${result.status}`, {
    retryable: isRetryableStatus(result.status),
    details: { status: result.status, url: redactUrl(attempt.url), retry_after: result.retryAfter },
  });
}
