import type { IncomingMessage, RequestListener, ServerResponse } from "node:http";
import type { Accepted, AcceptMessage, RequestHead } from "../core/app/accept-message.js";
import { ChannelError, errorMessage, isChannelError } from "../core/errors/channel-error.js";
import { renderProblem } from "../core/http/problem-response.js";
import { MAX_BODY_BYTES, tooLarge } from "../core/http/read-limited-body.js";
import type { Logger } from "../core/log/logger.js";

/**
 * The Node fast path: `POST` to a channel path goes straight from `node:http` to the core's
 * accept flow, the same one the Hono route calls; every other request goes to `fallback`
 * (the Hono app). The answer is written from the body's `end` event when nothing has to wait,
 * as a hand-written `node:http` server would: building Web `Request`/`Response` objects,
 * dispatching through Hono and answering from promise continuations cost about a third of the
 * inbound throughput on Node (see bench/README.md).
 */
export function createInboundListener(
  accepts: ReadonlyMap<string, AcceptMessage>,
  fallback: RequestListener,
  logger: Logger,
): RequestListener {
  const fail = (request: IncomingMessage, response: ServerResponse, error: unknown): void => {
    let problem: ReturnType<typeof renderProblem>;
    if (isChannelError(error)) problem = renderProblem(error);
    else {
      logger.error("unexpected error while handling a request", { error: errorMessage(error) });
      problem = renderProblem(new ChannelError("internal_error", "An unexpected error occurred.", { status: 500 }));
    }
    // A refused body may still be arriving: close the connection rather than read it.
    response.writeHead(
      problem.status,
      request.complete ? problem.headers : { ...problem.headers, connection: "close" },
    );
    response.end(problem.body);
  };
  const succeed = (response: ServerResponse, accepted: Accepted): void => {
    const body = JSON.stringify(accepted);
    response.writeHead(200, { "content-type": "application/json", "content-length": Buffer.byteLength(body) });
    response.end(body);
  };

  return (request, response) => {
    const url = request.url ?? "/";
    const query = url.indexOf("?");
    const accept = request.method === "POST" ? accepts.get(query === -1 ? url : url.slice(0, query)) : undefined;
    if (accept === undefined) {
      fallback(request, response);
      return;
    }
    const { headers } = request;
    const head: RequestHead = {
      authorization: headers.authorization ?? null,
      contentType: headers["content-type"] ?? null,
      idempotencyKey: joined(headers["idempotency-key"]),
    };
    try {
      accept.checkHead(head);
    } catch (error) {
      fail(request, response, error);
      return;
    }
    readBody(request, MAX_BODY_BYTES, (readError, body) => {
      if (body === undefined) {
        fail(request, response, readError);
        return;
      }
      let result: Accepted | Promise<Accepted>;
      try {
        result = accept.acceptBody(head, body);
      } catch (error) {
        fail(request, response, error);
        return;
      }
      if (result instanceof Promise) {
        result.then(
          (accepted) => succeed(response, accepted),
          (error: unknown) => fail(request, response, error),
        );
      } else succeed(response, result);
    });
  };
}

function joined(value: string | string[] | undefined): string | null {
  if (value === undefined) return null;
  return Array.isArray(value) ? value.join(", ") : value;
}

/**
 * Reads a body of at most `limit` bytes and calls `done` once: a declared `Content-Length`
 * over the limit fails before anything is read, and the bytes actually received (chunked
 * bodies too) are counted.
 */
function readBody(request: IncomingMessage, limit: number, done: (error: unknown, body?: Uint8Array) => void): void {
  const declared = request.headers["content-length"];
  if (declared !== undefined && Number(declared) > limit) {
    done(tooLarge(limit));
    return;
  }
  const chunks: Buffer[] = [];
  let total = 0;
  let settled = false;
  const finish = (error: unknown, body?: Uint8Array): void => {
    if (settled) return;
    settled = true;
    request.off("data", onData);
    done(error, body);
  };
  const onData = (chunk: Buffer): void => {
    total += chunk.byteLength;
    if (total > limit) finish(tooLarge(limit));
    else chunks.push(chunk);
  };
  // `on`, not `once`: finish() runs at most once anyway, and once() wraps every listener.
  request.on("data", onData);
  request.on("end", () => finish(undefined, chunks.length === 1 ? chunks[0] : Buffer.concat(chunks, total)));
  request.on("error", (error) => finish(error));
  // A client that goes away mid-body ends the read; nothing was accepted.
  request.on("close", () => {
    if (!request.complete) finish(new ChannelError("invalid_json", "The request body was cut short.", { status: 400 }));
  });
}
