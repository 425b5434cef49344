import { type Dispatcher, Pool } from "undici";
import { errorMessage } from "../../core/channel-error.js";
import { type Poster, type PostResult, postFailed } from "../../core/outbound/poster.js";

/** Options of the keep-alive poster. */
export interface UndiciPosterOptions {
  /** Connections per origin. Default 128. */
  readonly connections?: number;
}

/** A Poster that also closes its connection pools. */
export interface ClosablePoster extends Poster {
  /** Closes the pools, aborting requests still in flight (called after shutdown's wait). */
  close(): Promise<void>;
}

interface Target {
  readonly pool: Pool;
  readonly path: string;
}

/**
 * The Node outbound client: one keep-alive undici `Pool` per outbound origin, made once.
 * Node 20's global fetch posts about 4,000 replies/s to a local receiver; this posts several
 * times that. Redirects are not followed (a Pool never does). The time limit of an attempt
 * is a plain timer: `AbortSignal.timeout` costs several microseconds per reply.
 */
export function createUndiciPoster(options: UndiciPosterOptions = {}): ClosablePoster {
  const connections = options.connections ?? 128;
  const pools = new Map<string, Pool>();
  const targets = new Map<string, Target>();

  const targetOf = (url: string): Target => {
    const known = targets.get(url);
    if (known !== undefined) return known;
    const parsed = new URL(url);
    let pool = pools.get(parsed.origin);
    if (pool === undefined) {
      pool = new Pool(parsed.origin, { connections, keepAliveTimeout: 4_000 });
      pools.set(parsed.origin, pool);
    }
    const target = { pool, path: `${parsed.pathname}${parsed.search}` };
    targets.set(url, target);
    return target;
  };

  return {
    post(url, body, headers, timeoutMs): Promise<PostResult> {
      return new Promise<PostResult>((resolve, reject) => {
        let controller: Dispatcher.DispatchController | null = null;
        let status = 0;
        let retryAfter: string | null = null;
        let settled = false;
        const fail = (error: unknown, timedOut: boolean): void => {
          if (settled) return;
          settled = true;
          clearTimeout(timer);
          reject(postFailed(url, timeoutMs, timedOut ? undefined : describe(error), error));
        };
        const timer = setTimeout(() => {
          const error = new Error(`no answer within ${timeoutMs} ms`);
          fail(error, true);
          // A request still waiting for a free connection is aborted when it gets one.
          controller?.abort(error);
        }, timeoutMs);
        // dispatch() with a handler instead of request(): no response stream, no promise
        // chain and no AbortSignal per reply; the answer's body is read and dropped, which
        // lets the connection go back to the pool.
        try {
          const { pool, path } = targetOf(url);
          pool.dispatch(
            { method: "POST", path, body, headers },
            {
              onRequestStart(started) {
                controller = started;
                if (settled) started.abort(new Error("timed out while waiting for a connection"));
              },
              onResponseStart(_controller, statusCode, responseHeaders) {
                status = statusCode;
                const value = responseHeaders["retry-after"];
                retryAfter = typeof value === "string" ? value : null;
              },
              onResponseData() {},
              onResponseEnd() {
                if (settled) return;
                settled = true;
                clearTimeout(timer);
                resolve({ status, retryAfter });
              },
              onResponseError(_controller, error) {
                fail(error, false);
              },
            },
          );
        } catch (error) {
          // A bad URL or invalid options are thrown, not reported to the handler.
          fail(error, false);
        }
      });
    },
    async close() {
      await Promise.all([...pools.values()].map((pool) => pool.destroy()));
    },
  };
}

function describe(error: unknown): string {
  if (error instanceof Error && "code" in error && typeof error.code === "string") {
    return `${error.code} ${errorMessage(error)}`;
  }
  if (error instanceof Error && error.cause instanceof Error) return errorMessage(error.cause);
  return errorMessage(error);
}
