/** The headers the accept flow reads, whatever the server that received the request. */
export interface RequestHead {
  readonly authorization: string | null;
  readonly contentType: string | null;
  readonly idempotencyKey: string | null;
}

/**
 * Builds the head from a header lookup (lower-case names; null when absent). Both the Hono
 * route and the Node fast path call it, so the headers read are listed once.
 */
export function readRequestHead(header: (name: string) => string | null): RequestHead {
  return {
    authorization: header("authorization"),
    contentType: header("content-type"),
    idempotencyKey: header("idempotency-key"),
  };
}
