import type { IncomingMessage } from "node:http";
import { BodyCollector, bodyCutShortError, checkDeclaredLength, MAX_BODY_BYTES } from "../../core/http/body-limit.js";

/**
 * Reads a `node:http` request body of at most `limit` bytes with the core's rules
 * ({@link checkDeclaredLength}, {@link BodyCollector}) and calls `done` once. Callbacks, not a
 * promise: the fast path answers from the body's `end` event like bare `node:http`.
 */
export function readNodeBody(
  request: IncomingMessage,
  done: (error: unknown, body?: Uint8Array) => void,
  limit: number = MAX_BODY_BYTES,
): void {
  try {
    checkDeclaredLength(request.headers["content-length"], limit);
  } catch (error) {
    done(error);
    return;
  }
  const collector = new BodyCollector(limit);
  let settled = false;
  const finish = (error: unknown, body?: Uint8Array): void => {
    if (settled) return;
    settled = true;
    request.off("data", onData);
    done(error, body);
  };
  const onData = (chunk: Buffer): void => {
    try {
      collector.add(chunk);
    } catch (error) {
      finish(error);
    }
  };
  // `on`, not `once`: finish() runs at most once anyway, and once() wraps every listener.
  request.on("data", onData);
  request.on("end", () => finish(undefined, collector.bytes()));
  // A client that goes away mid-body ends the read; nothing was accepted. So does one that the
  // server drops at requestTimeout, which Node reports as an "aborted" error first: that is a
  // client's doing, not an internal error worth an error line per slow client.
  request.on("error", () => finish(bodyCutShortError()));
  request.on("close", () => {
    if (!request.complete) finish(bodyCutShortError());
  });
}

/**
 * How long a refused request's body is waited for: a proxy sends a buffered body at once, and a
 * client refused on its head (no secret) holds the connection no longer than this past it.
 */
export const DROP_BODY_MS = 5_000;

/**
 * Reads and drops the rest of a refused request's body, then calls `then` once: at its end,
 * when the client goes away, after `waitMs`, or at once when it is (or grows) over `limit`. A refusal that
 * closes the connection with the body still unread makes the kernel reset it, and a reset can
 * drop the answer before its client reads it: behind nginx or Caddy the client then gets the
 * proxy's 502 instead of the service's 401, 415, 429 or 503.
 */
export function dropNodeBody(
  request: IncomingMessage,
  then: () => void,
  limit: number = MAX_BODY_BYTES,
  waitMs: number = DROP_BODY_MS,
): void {
  try {
    checkDeclaredLength(request.headers["content-length"], limit);
  } catch {
    then();
    return;
  }
  let dropped = 0;
  let settled = false;
  const finish = (): void => {
    if (settled) return;
    settled = true;
    clearTimeout(timer);
    request.off("data", onData);
    then();
  };
  const timer = setTimeout(finish, waitMs);
  const onData = (chunk: Buffer): void => {
    dropped += chunk.length;
    if (dropped > limit) finish();
  };
  request.on("data", onData);
  request.on("end", finish);
  request.on("close", finish);
}
