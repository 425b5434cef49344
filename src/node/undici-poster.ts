import { Agent, request } from "undici";
import { redactUrl } from "../core/delivery/fetch-poster.js";
import type { Poster, PostResult } from "../core/delivery/poster.js";
import { ChannelError, errorMessage } from "../core/errors/channel-error.js";

/** Options of the keep-alive poster. */
export interface UndiciPosterOptions {
  /** Connections per origin. Default 128. */
  readonly connections?: number;
}

/** A Poster that also closes its connection pool. */
export interface ClosablePoster extends Poster {
  /** Closes the pool, aborting requests still in flight (called after shutdown's wait). */
  close(): Promise<void>;
}

/**
 * The Node outbound client: undici's `request` over a keep-alive Agent. Node 20's global
 * fetch posts about 4,000 replies/s to a local receiver; this posts several times that.
 * Redirects are not followed (undici's `request` never does).
 */
export function createUndiciPoster(options: UndiciPosterOptions = {}): ClosablePoster {
  const agent = new Agent({ connections: options.connections ?? 128, keepAliveTimeout: 4_000 });
  return {
    async post(url, body, headers, timeoutMs): Promise<PostResult> {
      try {
        const response = await request(url, {
          method: "POST",
          body,
          headers,
          dispatcher: agent,
          signal: AbortSignal.timeout(timeoutMs),
          headersTimeout: timeoutMs,
          bodyTimeout: timeoutMs,
        });
        // Reading the answer to its end lets the connection go back to the pool.
        await response.body.dump();
        const retryAfter = response.headers["retry-after"];
        return { status: response.statusCode, retryAfter: typeof retryAfter === "string" ? retryAfter : null };
      } catch (error) {
        const timedOut =
          error instanceof Error &&
          (error.name === "TimeoutError" || ("code" in error && String(error.code).includes("TIMEOUT")));
        throw new ChannelError(
          "delivery_failed",
          timedOut ? `no answer within ${timeoutMs} ms` : `request failed: ${describe(error)}`,
          { retryable: true, details: { url: redactUrl(url), timeout: timedOut }, cause: error },
        );
      }
    },
    close: () => agent.destroy(),
  };
}

function describe(error: unknown): string {
  if (error instanceof Error && "code" in error && typeof error.code === "string") {
    return `${error.code} ${errorMessage(error)}`;
  }
  if (error instanceof Error && error.cause instanceof Error) return errorMessage(error.cause);
  return errorMessage(error);
}
