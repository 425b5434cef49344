import type { IncomingMessage, RequestListener, ServerResponse } from "node:http";
import type { Accepted, AcceptMessage } from "../../core/app/accept-message.js";
import { isChannelError } from "../../core/channel-error.js";
import type { RequestHead } from "../../core/http/request-head.js";
import { parseTraceContext } from "../../core/http/trace-context.js";
import { channelPathOf, slashBackslashes } from "../listener/channel-path.js";
import type { InboundListener } from "../listener/inbound-listener.js";
import { problemAnsweredFor, refusalWrittenFor } from "../listener/protocol-refusals.js";
import { type Telemetry, type TelemetrySpan, traceparentOf } from "./telemetry.js";

/**
 * The inbound listener with a server span around every `POST` to a channel path, child of the
 * client's `traceparent` (a new trace when it sent none, or an invalid one). The request's
 * `traceparent` header is replaced by the span's own before the accept flow reads it, so the
 * message keeps the span as its parent and the brain and reply spans made for it later, on
 * either thread and after a restart, are its children. The span ends when the answer is
 * sent, with its status, the message id it was given or the error code it was refused with.
 *
 * `build` makes the listener from the accept flows it is handed: they are wrapped first, to
 * tell the span what the flow decided.
 */
export function tracedInbound(
  accepts: ReadonlyMap<string, AcceptMessage>,
  channels: ReadonlyMap<string, string>,
  build: (accepts: ReadonlyMap<string, AcceptMessage>) => InboundListener,
  telemetry: Telemetry,
): InboundListener {
  // The span of the request being handed to the listener: `readHead` runs synchronously
  // within that call, and ties the request's head (passed to every later step) to its span.
  let opening: TelemetrySpan | undefined;
  const spans = new WeakMap<RequestHead, TelemetrySpan>();
  const refused = (head: RequestHead, error: unknown): never => {
    if (isChannelError(error)) spans.get(head)?.set({ errorCode: error.code });
    throw error;
  };
  const traced = new Map<string, AcceptMessage>();
  for (const [path, accept] of accepts) {
    traced.set(path, {
      ...accept,
      readHead(header, peer) {
        const head = accept.readHead(header, peer);
        if (opening !== undefined) spans.set(head, opening);
        return head;
      },
      checkHead(head) {
        try {
          return accept.checkHead(head)?.catch((error: unknown) => refused(head, error));
        } catch (error) {
          return refused(head, error);
        }
      },
      acceptBody(head, body) {
        const took = (accepted: Accepted): Accepted => {
          spans.get(head)?.set({ messageId: accepted.message_id, conversationId: accepted.conversation_id });
          return accepted;
        };
        try {
          const result = accept.acceptBody(head, body);
          return result instanceof Promise ? result.then(took, (error: unknown) => refused(head, error)) : took(result);
        } catch (error) {
          return refused(head, error);
        }
      },
    });
  }
  const inner = build(traced);

  const wrap =
    (listener: RequestListener): RequestListener =>
    (request, response) => {
      slashBackslashes(request);
      const path = request.method === "POST" ? channelPathOf(request.url ?? "/", (at) => channels.has(at)) : undefined;
      const channel = path === undefined ? undefined : channels.get(path);
      if (path === undefined || channel === undefined) {
        listener(request, response);
        return;
      }
      const span = serverSpan(request, response, path, channel, telemetry);
      opening = span;
      try {
        listener(request, response);
      } finally {
        opening = undefined;
      }
    };
  return {
    onRequest: wrap(inner.onRequest),
    onCheckContinue: wrap(inner.onCheckContinue),
    onCheckExpectation: wrap(inner.onCheckExpectation),
  };
}

/** `error.type` of a request whose connection closed before it was answered (the client left, or a stop cut it). */
const CLOSED_UNANSWERED = "closed_unanswered";

/** Starts the span of one request, puts it in the request's `traceparent`, and ends it with the answer. */
function serverSpan(
  request: IncomingMessage,
  response: ServerResponse,
  path: string,
  channel: string,
  telemetry: Telemetry,
): TelemetrySpan {
  const { headers } = request;
  const parent = parseTraceContext(single(headers.traceparent), single(headers.tracestate));
  const span = telemetry.start(`POST ${path}`, "server", parent, { channel, httpMethod: "POST", httpRoute: path });
  headers.traceparent = traceparentOf(span.context);
  // A tracestate belongs to the traceparent it came with: without a valid one it was never kept.
  if (parent === undefined) delete headers.tracestate;
  response.once("close", () => {
    // A request that ran out of time is refused on its socket, past its response object.
    const written = response.headersSent ? undefined : refusalWrittenFor(response);
    const status = response.headersSent ? response.statusCode : written?.status;
    if (status !== undefined) span.set({ httpStatus: status });
    // The body's size limits refuse in the listener, before the accept flow sees the request.
    if (status === 413) span.set({ errorCode: "payload_too_large" });
    if (written !== undefined) span.set({ errorCode: written.code });
    // Refused by the listener itself before the accept flow (no Host, a transfer coding, an Expect).
    const problem = problemAnsweredFor(response);
    if (problem !== undefined) span.set({ errorCode: problem.code });
    // No answer at all: the connection closed before one was sent.
    if (status === undefined) span.set({ errorCode: CLOSED_UNANSWERED });
    // A refusal (4xx) is the client's failure, not the server's, as the conventions say.
    span.end(status === undefined || status >= 500);
  });
  return span;
}

function single(value: string | string[] | undefined): string | null {
  if (value === undefined) return null;
  return Array.isArray(value) ? value.join(", ") : value;
}
