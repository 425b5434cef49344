import { type Dispatcher, Pool } from "undici";
import { ChannelError, errorMessage } from "../../core/channel-error.js";
import type { ClientTls, TlsMaterial } from "../../core/outbound/client-tls.js";
import { type Poster, type PostResult, postFailed, tlsUnsupported } from "../../core/outbound/poster.js";

/** Options of the keep-alive poster. */
export interface UndiciPosterOptions {
  /** Connections per origin. Default 128. */
  readonly connections?: number;
  /** The clock that says how long a pool went unused: monotonic (`performance.now`) unless a test sets its own. */
  readonly now?: () => number;
}

/** A Poster that also closes its connection pools. */
export interface ClosablePoster extends Poster {
  /** Closes the pools, aborting requests still in flight (called after shutdown's wait). */
  close(): Promise<void>;
  /** The pools open now, one per origin and TLS identity in recent use. */
  openPools(): number;
}

/**
 * How long a pool may go unused before a new pool opening closes it. Its connections have most
 * likely closed already (the keep-alive timeout), and a close ends any left cleanly: a reload
 * that renews a certificate or moves `outbound_url` would otherwise leave one behind each time.
 */
export const IDLE_POOL_MS = 60_000;

interface Target {
  /** The pool's key: the origin, and the PEM texts of its TLS identity. */
  readonly key: string;
  readonly origin: string;
  readonly path: string;
  readonly connect: TlsMaterial | undefined;
}

interface HeldPool {
  readonly pool: Pool;
  usedAt: number;
}

/**
 * The Node outbound client: one keep-alive undici `Pool` per outbound origin and TLS identity,
 * made once. Node 20's global fetch posts about 4,000 replies/s to a local receiver; this posts
 * several times that. Redirects are not followed (a Pool never does). The time limit of an
 * attempt is a plain timer: `AbortSignal.timeout` costs several microseconds per reply.
 *
 * A channel's `webhook.tls` (a client certificate, a CA) is a connection option, so it gets
 * pools of its own: connections that presented one certificate are never reused for another
 * channel's, or for none. Its targets are cached per `ClientTls` object, which a channel's route
 * keeps until a reload builds a new one (a renewed certificate then gets new pools). A pool left
 * unused for {@link IDLE_POOL_MS} is closed when a new one opens, so reloads do not pile them up.
 */
export function createUndiciPoster(options: UndiciPosterOptions = {}): ClosablePoster {
  const connections = options.connections ?? 128;
  const now = options.now ?? (() => performance.now());
  const pools = new Map<string, HeldPool>();
  const targets = new Map<string, Target>();
  const tlsTargets = new WeakMap<ClientTls, Map<string, Target>>();

  const targetOf = (url: string, tls: ClientTls | undefined): Target => {
    const cache = tls === undefined ? targets : cacheFor(tlsTargets, tls);
    const known = cache.get(url);
    if (known !== undefined) return known;
    const parsed = new URL(url);
    const connect = tls === undefined ? undefined : connectOptions(url, tls);
    // The PEM texts are part of the key: two channels with the same certificate share pools.
    const key =
      connect === undefined
        ? parsed.origin
        : [parsed.origin, connect.cert ?? "", connect.key ?? "", connect.ca ?? ""].join("\n");
    const target = { key, origin: parsed.origin, path: `${parsed.pathname}${parsed.search}`, connect };
    cache.set(url, target);
    return target;
  };

  /** Closes the pools unused for {@link IDLE_POOL_MS} with no request in flight. */
  const closeIdle = (at: number): void => {
    for (const [key, held] of pools) {
      if (at - held.usedAt < IDLE_POOL_MS || held.pool.stats.size > 0) continue;
      pools.delete(key);
      held.pool.close().catch(() => undefined);
    }
  };

  const poolOf = (target: Target): Pool => {
    const at = now();
    let held = pools.get(target.key);
    if (held === undefined) {
      closeIdle(at);
      const pool = new Pool(target.origin, {
        connections,
        keepAliveTimeout: 4_000,
        // The attempt's own timer (`timeout_ms`) is the only limit: undici's defaults would end
        // a longer one at five minutes, as a failure that is not called a timeout.
        headersTimeout: 0,
        bodyTimeout: 0,
        ...(target.connect === undefined ? {} : { connect: target.connect }),
      });
      held = { pool, usedAt: at };
      pools.set(target.key, held);
    }
    held.usedAt = at;
    return held.pool;
  };

  return {
    post(url, body, headers, timeoutMs, tls): Promise<PostResult> {
      return new Promise<PostResult>((resolve, reject) => {
        let controller: Dispatcher.DispatchController | null = null;
        let status = 0;
        let retryAfter: string | null = null;
        let settled = false;
        let ended = false;
        let drained = 0;
        const fail = (error: unknown, timedOut: boolean): void => {
          if (settled) return;
          settled = true;
          clearTimeout(timer);
          reject(postFailed(url, timeoutMs, timedOut ? undefined : describe(error), error));
        };
        const timer = setTimeout(() => {
          // After this turn's I/O: a process that was stopped (SIGSTOP, a frozen VM) wakes with
          // its timers due and the receiver's answer already waiting on the socket; timers run
          // before sockets are read, and the answer, read first, is what counts (a false timeout
          // would count towards the shared receiver circuit).
          setImmediate(() => {
            if (ended) return;
            const error = new Error(`no answer within ${timeoutMs} ms`);
            fail(error, true);
            // A request still waiting for a free connection is aborted when it gets one, and an
            // answer whose body is still coming loses its connection (the answer stands): held,
            // it would keep one of the pool's connections until the receiver ends it.
            controller?.abort(error);
          });
        }, timeoutMs);
        // dispatch() with a handler instead of request(): no response stream, no promise
        // chain and no AbortSignal per reply. The status is the answer, as fetch's is on
        // Workers: a 2xx whose body is slow, cut off or large was still received. The body is
        // read and dropped, which lets the connection go back to the pool, within the attempt's
        // time and a size bound; past either the connection is closed instead.
        try {
          const target = targetOf(url, tls);
          poolOf(target).dispatch(
            { method: "POST", path: target.path, body, headers },
            {
              onRequestStart(started) {
                controller = started;
                if (settled) started.abort(new Error("timed out while waiting for a connection"));
              },
              onResponseStart(_controller, statusCode, responseHeaders) {
                // An interim answer (103 Early Hints) comes before the one that counts.
                if (statusCode < 200) return;
                status = statusCode;
                const value = responseHeaders["retry-after"];
                retryAfter = typeof value === "string" ? value : null;
                if (settled) return;
                settled = true;
                resolve({ status, retryAfter });
              },
              onResponseData(dispatched, chunk) {
                drained += chunk.length;
                if (drained > MAX_DRAINED_BYTES) dispatched.abort(new Error("answer body too large to drain"));
              },
              onResponseEnd() {
                ended = true;
                clearTimeout(timer);
              },
              onResponseError(_controller, error) {
                ended = true;
                clearTimeout(timer);
                fail(error, false);
              },
            },
          );
        } catch (error) {
          if (error instanceof ChannelError) {
            settled = true;
            clearTimeout(timer);
            reject(error);
            return;
          }
          // A bad URL or invalid options are thrown, not reported to the handler.
          fail(error, false);
        }
      });
    },
    async close() {
      await Promise.all([...pools.values()].map((held) => held.pool.destroy()));
    },
    openPools: () => pools.size,
  };
}

/** The most of an answer's body read to keep its connection; a larger one closes it instead. */
const MAX_DRAINED_BYTES = 64 * 1024;

function describe(error: unknown): string {
  if (error instanceof Error && "code" in error && typeof error.code === "string") {
    return `${error.code} ${errorMessage(error)}`;
  }
  if (error instanceof Error && error.cause instanceof Error) return errorMessage(error.cause);
  return errorMessage(error);
}

function cacheFor(caches: WeakMap<ClientTls, Map<string, Target>>, tls: ClientTls): Map<string, Target> {
  let cache = caches.get(tls);
  if (cache === undefined) {
    cache = new Map();
    caches.set(tls, cache);
  }
  return cache;
}

/** The socket options of a channel's TLS; refused when it only names a Workers binding. */
function connectOptions(url: string, tls: ClientTls): TlsMaterial {
  if (tls.material === undefined) {
    throw tlsUnsupported(
      url,
      "on Node a client certificate comes from tls.client_cert_env and tls.client_key_env, not mtls_binding",
    );
  }
  return tls.material;
}
