import { type IncomingMessage, type RequestListener, type ServerResponse, STATUS_CODES } from "node:http";
import type { Socket } from "node:net";
import { getRequestListener, RequestError } from "@hono/node-server";
import { ChannelError } from "../../core/channel-error.js";
import { renderProblem } from "../../core/http/problem-response.js";

/** What Node's HTTP parser refuses before there is a request to answer, by its error code. */
const CLIENT_ERRORS: Readonly<Record<string, ChannelError>> = {
  HPE_HEADER_OVERFLOW: new ChannelError(
    "headers_too_large",
    "The request's headers are larger than the server reads.",
    { status: 431 },
  ),
  ERR_HTTP_REQUEST_TIMEOUT: new ChannelError(
    "request_timeout",
    "The request did not arrive within the server's time limits (see docs/security.md).",
    { status: 408 },
  ),
};

const MALFORMED = new ChannelError(
  "bad_request",
  "The request is not HTTP/1.1 that the server can read (its request line, a method it does not know, its framing).",
  { status: 400 },
);

/** The part of a socket that holds the answer under way on it, if any (Node's own field). */
interface AnsweringSocket {
  readonly _httpMessage?: {
    readonly headersSent: boolean;
    /** The request it answers (Node's `response.req`). */
    readonly req?: {
      readonly complete: boolean;
      readonly method?: string | undefined;
      readonly url?: string | undefined;
    };
    once(event: "finish", listener: () => void): unknown;
  } | null;
}

/** How long an answer under way on a connection Node refused more of gets before the connection is cut. */
const ANSWER_GRACE_MS = 5_000;

/**
 * The refusals {@link answerClientError} wrote on the socket for a request under way, by that
 * request's response object, which never sends them itself: read by {@link refusalWrittenFor}.
 */
const writtenOnSocket = new WeakMap<object, ChannelError>();

/**
 * The refusal written on the socket in place of `response`'s own answer (a 408 while its body
 * was arriving), or `undefined`: the response then reports no status of its own.
 */
export function refusalWrittenFor(response: object): ChannelError | undefined {
  return writtenOnSocket.get(response);
}

/** A refusal {@link answerClientError} wrote, and the request under way it answered, if one was. */
export interface ClientErrorAnswer {
  readonly status: number;
  readonly method: string | undefined;
  readonly url: string | undefined;
}

/**
 * The `clientError` listener of a listener's server: what Node refuses before a request exists (a
 * malformed request, headers over its limit, a request that took too long) is answered as every
 * other refusal, `application/problem+json` with a stable `code`, and the connection closes.
 * Behind an answer still under way on the connection (a 200 waiting for its commit), nothing is
 * written: that answer goes first, then the connection closes, so that a client never reads a
 * refusal as the answer to a request that was accepted. A request that took too long is the one
 * under way: it gets the 408 unless its answer has begun. Returns what it wrote, for the
 * channel's count of answers.
 */
export function answerClientError(
  error: Error & { readonly code?: string },
  socket: Socket,
): ClientErrorAnswer | undefined {
  const answering = (socket as Socket & AnsweringSocket)._httpMessage ?? undefined;
  const timedOut = error.code === "ERR_HTTP_REQUEST_TIMEOUT";
  // The request under way lost the rest of its body (the client reset or closed the
  // connection): its answer waits for nothing but that read to end, which the close ends now.
  if (answering?.req?.complete === false && !timedOut) {
    socket.destroy();
    return undefined;
  }
  // A time limit with a whole request under way ran out on one pipelined behind it: a 408 written
  // now would be read as the earlier request's answer (one that may be accepted). That answer
  // goes first, then the connection closes, as behind any answer under way.
  const behindWhole = timedOut && answering?.req?.complete === true && answering.headersSent !== true;
  if (answering !== undefined && (!timedOut || behindWhole)) {
    const cut = setTimeout(() => socket.destroy(), ANSWER_GRACE_MS);
    cut.unref();
    answering.once("finish", () => {
      clearTimeout(cut);
      socket.destroySoon();
    });
    return undefined;
  }
  if (error.code !== "ECONNRESET" && socket.writable && answering?.headersSent !== true) {
    const refusal = (error.code === undefined ? undefined : CLIENT_ERRORS[error.code]) ?? MALFORMED;
    const { status, headers, body } = renderProblem(refusal);
    const fields = { ...headers, "content-length": String(Buffer.byteLength(body)), connection: "close" };
    const head = [`HTTP/1.1 ${status} ${STATUS_CODES[status] ?? ""}`];
    for (const [name, value] of Object.entries(fields)) head.push(`${name}: ${value}`);
    socket.end(`${head.join("\r\n")}\r\n\r\n${body}`);
    socket.destroySoon();
    if (answering !== undefined) writtenOnSocket.set(answering, refusal);
    return { status, method: answering?.req?.method, url: answering?.req?.url };
  }
  socket.destroySoon();
  return undefined;
}

const EXPECTATION_FAILED = new ChannelError(
  "expectation_failed",
  "The only `Expect` the server meets is `100-continue`.",
  { status: 417 },
);

/** The `checkExpectation` listener: an `Expect` other than `100-continue`, refused as a problem. */
export function answerExpectation(_request: IncomingMessage, response: ServerResponse): void {
  answerProblem(response, EXPECTATION_FAILED, { connection: "close" });
}

const NO_HOST = new ChannelError("bad_request", "An HTTP/1.1 request must carry a Host header.", { status: 400 });

/**
 * An HTTP/1.1 request without `Host`, which RFC 9112 has a server refuse with 400. The servers
 * are made with `requireHostHeader: false` so that it is refused here, as a problem, rather
 * than by Node with an empty body.
 */
export function lacksHost(request: IncomingMessage): boolean {
  return request.headers.host === undefined && request.httpVersionMajor === 1 && request.httpVersionMinor === 1;
}

const TRANSFER_CODED = new ChannelError(
  "not_implemented",
  "The body must be sent plain or chunked: other transfer codings (gzip, deflate, compress) are not read.",
  { status: 501 },
);

/**
 * The 501 of a request whose `Transfer-Encoding` names a coding other than `chunked`, or
 * `undefined`. Node's parser frames such a body by its final `chunked` and hands over the coded
 * bytes, which would otherwise be read as the message; RFC 9112 answers a transfer coding a
 * server does not understand with 501.
 */
export function transferCodingRefusal(request: IncomingMessage): ChannelError | undefined {
  const codings = request.headers["transfer-encoding"];
  if (codings === undefined) return undefined;
  for (const coding of codings.split(",")) {
    const name = coding.trim().toLowerCase();
    if (name !== "" && name !== "chunked") return TRANSFER_CODED;
  }
  return undefined;
}

/** The 400 `bad_request` of a request {@link lacksHost}. */
export function missingHostError(): ChannelError {
  return NO_HOST;
}

/** The refusals {@link answerProblem} wrote, by response: read by {@link problemAnsweredFor}. */
const answeredWith = new WeakMap<object, ChannelError>();

/** The refusal {@link answerProblem} answered `response` with (its problem code, for a span), or `undefined`. */
export function problemAnsweredFor(response: object): ChannelError | undefined {
  return answeredWith.get(response);
}

/** A refusal that belongs to no channel (nothing counts it), answered as the app would. */
export function answerProblem(
  response: ServerResponse,
  error: ChannelError,
  extra: Readonly<Record<string, string>> = {},
): void {
  answeredWith.set(response, error);
  const { status, headers, body } = renderProblem(error);
  response.writeHead(status, { ...headers, ...extra, "content-length": Buffer.byteLength(body) });
  response.end(body);
}

const UNREADABLE_FOR_APP = new ChannelError(
  "bad_request",
  "The request's Host header or target is not one the server can read.",
  { status: 400 },
);

const FAILED_FOR_APP = new ChannelError("internal_error", "The request could not be handled.", { status: 500 });

/**
 * The app (health, readiness, metrics, admin) as a Node listener. A request without `Host`
 * (HTTP/1.0 may leave it out; an HTTP/1.1 one is refused before) reaches the app as for
 * `localhost`; one whose `Host` or target the adapter cannot make a URL of is a `bad_request`
 * problem, where the adapter would answer an empty 400.
 */
export function appListener(fetch: (request: Request) => Response | Promise<Response>): RequestListener {
  const listener = getRequestListener(fetch, {
    hostname: "localhost",
    errorHandler: (error) => {
      const { status, headers, body } = renderProblem(
        error instanceof RequestError ? UNREADABLE_FOR_APP : FAILED_FOR_APP,
      );
      // As every refusal of a request Node could not read: nothing more is read on the connection.
      return new Response(body, { status, headers: { ...headers, connection: "close" } });
    },
  });
  return (request, response) => void listener(request, response);
}
