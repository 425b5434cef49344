import { errorMessage } from "../channel-error.js";
import { type Poster, type PostResult, postFailed } from "./poster.js";

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
        throw postFailed(url, timeoutMs, timedOut ? undefined : errorMessage(error), error);
      }
      // The body is not needed; releasing it frees the connection for reuse.
      await response.body?.cancel().catch(() => undefined);
      return { status: response.status, retryAfter: response.headers.get("retry-after") };
    },
  };
}
