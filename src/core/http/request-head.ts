/** What the accept flow reads of a request, whatever the server that received it. */
export interface RequestHead {
  readonly authorization: string | null;
  readonly contentType: string | null;
  /** `Content-Encoding`: the body is read as sent, so any coding but `identity` is refused. */
  readonly contentEncoding: string | null;
  readonly idempotencyKey: string | null;
  /** The W3C `traceparent` and `tracestate` headers, read leniently by the accept flow. */
  readonly traceparent: string | null;
  readonly tracestate: string | null;
  /** The client's address (see `resolveClientAddress`); null when the server cannot tell. */
  readonly clientAddress: string | null;
}

/**
 * Builds the head from a header lookup (lower-case names; null when absent) and the client's
 * address. Both the Hono route and the Node fast path call it, so the headers read are listed
 * once.
 */
export function readRequestHead(header: (name: string) => string | null, clientAddress: string | null): RequestHead {
  return {
    authorization: header("authorization"),
    contentType: header("content-type"),
    contentEncoding: header("content-encoding"),
    idempotencyKey: header("idempotency-key"),
    traceparent: header("traceparent"),
    tracestate: header("tracestate"),
    clientAddress,
  };
}
