import { ChannelError, errorMessage } from "../errors/channel-error.js";
import type { Poster, PostResult } from "./poster.js";

/** A Poster on the platform's `fetch` (Workers, or any runtime without a faster client). */
export function createFetchPoster(fetchImpl: typeof fetch = fetch): Poster {
  return {
    async post(url, body, headers, timeoutMs): Promise<PostResult> {
      let response: Response;
      try {
        response = await fetchImpl(url, {
          method: "POST",
          body,
          headers,
          redirect: "manual",
          signal: AbortSignal.timeout(timeoutMs),
        });
      } catch (error) {
        const timedOut = error instanceof DOMException && error.name === "TimeoutError";
        throw new ChannelError(
          "delivery_failed",
          timedOut ? `no answer within ${timeoutMs} ms` : `request failed: ${errorMessage(error)}`,
          { retryable: true, details: { url: redactUrl(url), timeout: timedOut }, cause: error },
        );
      }
      // The body is not needed; releasing it frees the connection for reuse.
      await response.body?.cancel().catch(() => undefined);
      return { status: response.status, retryAfter: response.headers.get("retry-after") };
    },
  };
}

/** A URL without credentials or query, safe to log. */
export function redactUrl(url: string): string {
  if (!URL.canParse(url)) return "(invalid url)";
  const parsed = new URL(url);
  return `${parsed.protocol}//${parsed.host}${parsed.pathname}`;
}
