import type { IncomingMessage, RequestListener, ServerResponse } from "node:http";
import type { Accepted, AcceptMessage } from "../../core/app/accept-message.js";
import { problemFor } from "../../core/http/problem-for.js";
import { renderProblem } from "../../core/http/problem-response.js";
import { type RequestHead, readRequestHead } from "../../core/http/request-head.js";
import type { Logger } from "../../core/log/logger.js";
import { readNodeBody } from "./read-node-body.js";

/**
 * The Node fast path: `POST` to a channel path goes straight from `node:http` to the core's
 * accept flow, the same one the Hono route calls, through the same head, body-limit and
 * problem steps; every other request goes to `fallback` (the Hono app). The answer is
 * written from the body's `end` event when nothing has to wait, as a hand-written
 * `node:http` server would: building Web `Request`/`Response` objects, dispatching through
 * Hono and answering from promise continuations cost about a third of the inbound
 * throughput on Node (see bench/README.md).
 */
export function createInboundListener(
  accepts: ReadonlyMap<string, AcceptMessage>,
  fallback: RequestListener,
  logger: Logger,
): RequestListener {
  const fail = (request: IncomingMessage, response: ServerResponse, error: unknown): void => {
    const problem = renderProblem(problemFor(error, logger));
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
    const head: RequestHead = readRequestHead((name) => joined(headers[name]));
    try {
      accept.checkHead(head);
    } catch (error) {
      fail(request, response, error);
      return;
    }
    readNodeBody(request, (readError, body) => {
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

/** A header as one string: repeated headers joined as HTTP says they may be, absent as null. */
function joined(value: string | string[] | undefined): string | null {
  if (value === undefined) return null;
  return Array.isArray(value) ? value.join(", ") : value;
}
