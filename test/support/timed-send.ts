/**
 * A client of a running service for the fault tests: one message, and what its answer was and
 * how long it took. A request that got no answer is status 0, never a throw.
 */

/** One message's answer. */
export interface Sent {
  readonly conversation: string;
  readonly status: number;
  readonly ms: number;
  readonly id?: string;
  readonly code?: string;
  readonly retryAfter: string | null;
}

/** POSTs `text` in `conversation` to `url` with `secret`, and `key` as its Idempotency-Key when given. */
export async function timedSend(
  url: string,
  secret: string,
  conversation: string,
  text: string,
  key?: string,
): Promise<Sent> {
  const started = Date.now();
  try {
    const response = await fetch(url, {
      method: "POST",
      headers: {
        authorization: `Bearer ${secret}`,
        "content-type": "application/json",
        ...(key === undefined ? {} : { "idempotency-key": key }),
      },
      body: JSON.stringify({ sender_id: conversation, text }),
      signal: AbortSignal.timeout(20_000),
    });
    const body = (await response.json()) as { message_id?: string; code?: string };
    return {
      conversation,
      status: response.status,
      ms: Date.now() - started,
      ...(body.message_id === undefined ? {} : { id: body.message_id }),
      ...(body.code === undefined ? {} : { code: body.code }),
      retryAfter: response.headers.get("retry-after"),
    };
  } catch {
    return { conversation, status: 0, ms: Date.now() - started, retryAfter: null };
  }
}
