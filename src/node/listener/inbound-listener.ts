import type { IncomingMessage, RequestListener, ServerResponse } from "node:http";
import type { Accepted, AcceptMessage } from "../../core/app/accept-message.js";
import { notFoundError } from "../../core/app/refusals.js";
import { checkDeclaredLength } from "../../core/http/body-limit.js";
import { problemFor } from "../../core/http/problem-for.js";
import { renderProblem } from "../../core/http/problem-response.js";
import type { RequestHead } from "../../core/http/request-head.js";
import type { Logger } from "../../core/log/logger.js";
import { channelPathOf, slashBackslashes } from "./channel-path.js";
import { headerOf } from "./header-of.js";
import {
  answerExpectation,
  answerProblem,
  lacksHost,
  missingHostError,
  transferCodingRefusal,
} from "./protocol-refusals.js";
import { dropNodeBody, readNodeBody } from "./read-node-body.js";

/** The events of a `node:http` server that carry a request, and their listeners. */
export interface InboundListener {
  /** For the server's `request` event (and `createServer`). */
  readonly onRequest: RequestListener;
  /**
   * For the server's `checkContinue` event: a request with `Expect: 100-continue`. With this
   * listener Node no longer sends `100 Continue` on its own; it is sent only once the request
   * passed every check that needs no body (auth-failure limit, secret, media type, declared
   * length), so a request that will be refused gets its final status instead.
   */
  readonly onCheckContinue: RequestListener;
  /**
   * For the server's `checkExpectation` event: an `Expect` other than `100-continue`, refused
   * with 417 as a problem (counted as the channel's answer when it is for a channel's path).
   */
  readonly onCheckExpectation: RequestListener;
}

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
  isShuttingDown: () => boolean = () => false,
  /**
   * Whether a request the Hono app answers reads a body it should be asked for with
   * `100 Continue` (the admin API's bulk replay, with the admin secret); none by default.
   */
  fallbackReadsBody: (request: IncomingMessage) => boolean = () => false,
): InboundListener {
  // Connections whose answer under way, or queued behind one that waits for a commit, closes
  // them: a request pipelined behind it is never taken, since its 200 could not be sent.
  const closing = new WeakSet<object>();
  // The requests taken on each connection, in order: a stopping service closes a connection with
  // the answer to the last request taken on it, never one that answers before a taken request's.
  const taken = new WeakMap<object, number>();
  const places = new WeakMap<IncomingMessage, number>();
  const take = (request: IncomingMessage): void => {
    const place = (taken.get(request.socket) ?? 0) + 1;
    taken.set(request.socket, place);
    places.set(request, place);
  };
  const isLastTaken = (request: IncomingMessage): boolean => places.get(request) === taken.get(request.socket);
  /** Whether the answer to `request` closes its connection while the service stops. */
  const closesOnStop = (request: IncomingMessage): boolean => {
    if (!isShuttingDown() || !isLastTaken(request)) return false;
    closing.add(request.socket);
    return true;
  };
  const fail = (
    request: IncomingMessage,
    response: ServerResponse,
    accept: AcceptMessage,
    error: unknown,
    close = false,
  ): void => {
    const problem = renderProblem(problemFor(error, logger, accept.channel));
    // A client that went away, or one the server answered itself (a 408 at its time limit,
    // counted there), gets nothing from here: nothing is counted.
    if (!request.socket.writable) return;
    accept.answered(problem.status);
    const closes = close || closesOnStop(request) || !request.complete;
    if (closes) closing.add(request.socket);
    // A refused body may still be arriving (or, after no 100 Continue, never will): close
    // the connection rather than read it. A stopping service closes every connection it answers.
    response.writeHead(problem.status, closes ? { ...problem.headers, connection: "close" } : problem.headers);
    response.end(problem.body);
  };
  const succeed = (
    request: IncomingMessage,
    response: ServerResponse,
    accept: AcceptMessage,
    accepted: Accepted,
  ): void => {
    // As `fail`: a client that left gets no answer, and none is counted (its message stays accepted).
    // The request's socket: a response queued behind another one has none of its own yet.
    if (request.socket.writable) accept.answered(200);
    const body = JSON.stringify(accepted);
    const headers = { "content-type": "application/json", "content-length": Buffer.byteLength(body) };
    response.writeHead(200, closesOnStop(request) ? { ...headers, connection: "close" } : headers);
    response.end(body);
  };

  /**
   * A refusal on the head alone (secret, limit, media type, a stop). Without `Expect:
   * 100-continue` the body is on its way (a proxy sends it whole): within the limit it is read
   * and dropped first, and the answer then closes the connection, so that it is not lost to a
   * reset. Nothing sent behind it on the connection is taken meanwhile.
   */
  const refuseHead = (
    request: IncomingMessage,
    response: ServerResponse,
    accept: AcceptMessage,
    error: unknown,
    expectsContinue: boolean,
  ): void => {
    if (expectsContinue || request.complete) {
      fail(request, response, accept, error);
      return;
    }
    closing.add(request.socket);
    dropNodeBody(request, () => fail(request, response, accept, error, true));
  };

  /** With the head checked: read the body (after `100 Continue` when asked for), then accept it. */
  const readAndAccept = (
    request: IncomingMessage,
    response: ServerResponse,
    accept: AcceptMessage,
    head: RequestHead,
    expectsContinue: boolean,
  ): void => {
    if (expectsContinue) {
      try {
        checkDeclaredLength(request.headers["content-length"]);
      } catch (error) {
        fail(request, response, accept, error);
        return;
      }
      response.writeContinue();
    }
    readNodeBody(request, (readError, body) => {
      if (body === undefined) {
        fail(request, response, accept, readError);
        return;
      }
      let result: Accepted | Promise<Accepted>;
      try {
        result = accept.acceptBody(head, body);
      } catch (error) {
        fail(request, response, accept, error);
        return;
      }
      if (result instanceof Promise) {
        result.then(
          (accepted) => succeed(request, response, accept, accepted),
          (error: unknown) => fail(request, response, accept, error),
        );
      } else succeed(request, response, accept, result);
    });
  };

  const handle = (request: IncomingMessage, response: ServerResponse, expectsContinue: boolean): void => {
    // Pipelined behind an answer that closed the connection (a refusal written before the body
    // was complete): never taken, since its 200 could not be sent back, and its client, told that
    // the connection closes, sends it again. Node reads no request behind a body not yet
    // complete, so a request read while the answer before it is still to come stays taken: that
    // answer keeps the connection open.
    if (!request.socket.writable || closing.has(request.socket)) return;
    slashBackslashes(request);
    const accept = acceptOf(accepts, request.method, request.url);
    if (lacksHost(request)) {
      closing.add(request.socket);
      accept?.answered(400);
      answerProblem(response, missingHostError(), { connection: "close" });
      return;
    }
    // Every route that reads a body (a channel's, the admin API's) reads it as sent.
    const coded = transferCodingRefusal(request);
    if (coded !== undefined) {
      closing.add(request.socket);
      accept?.answered(coded.status);
      answerProblem(response, coded, { connection: "close" });
      return;
    }
    if (accept === undefined) {
      // The fallback's answers (health, 404, 405, the admin API's refusals) need no body, so none
      // is asked for; the connection closes after the answer, since the client may still send
      // one. A request whose body the app reads (an admin bulk replay) is asked for it, as RFC
      // 9110 requires: without 100 Continue its client would wait until the request timeout.
      const asksBody = expectsContinue && !isShuttingDown() && fallbackReadsBody(request);
      if (asksBody) response.writeContinue();
      else if (expectsContinue || isShuttingDown()) {
        closing.add(request.socket);
        response.setHeader("connection", "close");
      }
      // `OPTIONS *` (a request to the server as a whole) names no path the app could route.
      if (request.url === "*") answerProblem(response, notFoundError());
      else fallback(request, response);
      return;
    }
    take(request);
    const head = accept.readHead((name) => headerOf(request, name), request.socket.remoteAddress ?? null);
    let checked: Promise<void> | undefined;
    try {
      checked = accept.checkHead(head);
    } catch (error) {
      refuseHead(request, response, accept, error, expectsContinue);
      return;
    }
    if (checked === undefined) readAndAccept(request, response, accept, head, expectsContinue);
    else {
      checked.then(
        () => readAndAccept(request, response, accept, head, expectsContinue),
        (error: unknown) => refuseHead(request, response, accept, error, expectsContinue),
      );
    }
  };

  return {
    onRequest: (request, response) => handle(request, response, false),
    onCheckContinue: (request, response) => handle(request, response, true),
    onCheckExpectation: (request, response) => {
      acceptOf(accepts, request.method, request.url)?.answered(417);
      answerExpectation(request, response);
    },
  };
}

/**
 * The accept flow of the channel a request is for: a `POST` whose target names a channel's path
 * ({@link channelPathOf}); undefined for any other request.
 */
export function acceptOf(
  accepts: ReadonlyMap<string, AcceptMessage>,
  method: string | undefined,
  target: string | undefined,
): AcceptMessage | undefined {
  if (method !== "POST") return undefined;
  const path = channelPathOf(target ?? "/", (candidate) => accepts.has(candidate));
  return path === undefined ? undefined : accepts.get(path);
}
