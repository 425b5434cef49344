import { ChannelError, sharedRefusal } from "../channel-error.js";

/**
 * Seconds a client is told to wait (`Retry-After`) when a message cannot be taken right now,
 * by reason. The one table for both runtimes: a full buffer frees as replies go out and a
 * duplicate key settles within milliseconds, so 1 s; a failing store or queue, or a service
 * on its way down, needs longer.
 */
export const RETRY_AFTER_SECONDS = {
  bufferFull: 1,
  requestInProgress: 1,
  unavailable: 5,
  shuttingDown: 5,
  stateUnavailable: 5,
  commitsBehind: 5,
} as const;

const BUFFER_FULL = sharedRefusal("buffer_full", "The inbound buffer is full; retry shortly.", {
  status: 503,
  retryable: true,
  retryAfterSeconds: RETRY_AFTER_SECONDS.bufferFull,
});

/** The 503 of a full inbound buffer: one shared, frozen error ({@link sharedRefusal}). */
export function bufferFullError(): ChannelError {
  return BUFFER_FULL;
}

const COMMITS_BEHIND = sharedRefusal(
  "buffer_full",
  "The service's database has not yet committed the messages accepted before this one; retry shortly.",
  { status: 503, retryable: true, retryAfterSeconds: RETRY_AFTER_SECONDS.commitsBehind },
);

/**
 * The 503 of a queue whose store is behind with its commits (`InboundQueue.refusal`): a new
 * message would wait longer than a bound. `buffer_full`, with the longer wait of a store that
 * cannot take messages, since the database is what has to catch up. One shared, frozen error.
 */
export function commitsBehindError(): ChannelError {
  return COMMITS_BEHIND;
}

/**
 * The 503 of a message that a store or the platform queue could not take. It says
 * `buffer_full`, the code clients already retry on, so it never reads as accepted.
 */
export function unavailableError(cause?: unknown): ChannelError {
  return new ChannelError("buffer_full", "The message could not be accepted right now; retry shortly.", {
    status: 503,
    retryable: true,
    retryAfterSeconds: RETRY_AFTER_SECONDS.unavailable,
    cause,
  });
}

/**
 * The 503 of a write the shared state (Postgres, `postgres_url_env`) could not take: the
 * database is unreachable or failed the statement. Nothing was accepted; the service recovers
 * by itself once the database answers again, so a retry after a few seconds succeeds.
 */
export function stateUnavailableError(cause?: unknown): ChannelError {
  return new ChannelError("state_unavailable", "The shared state cannot be written right now; retry shortly.", {
    status: 503,
    retryable: true,
    retryAfterSeconds: RETRY_AFTER_SECONDS.stateUnavailable,
    cause,
  });
}

const STATE_DOWN = sharedRefusal(
  "state_unavailable",
  "The service's database cannot take writes right now; retry shortly.",
  { status: 503, retryable: true, retryAfterSeconds: RETRY_AFTER_SECONDS.stateUnavailable },
);

/**
 * The 503 of a queue whose shared state is known not to take writes (its last probe's write check
 * failed), so a new message is refused before its write is asked, which would fail or wait for
 * its time limit. One shared, frozen error: a flood during an outage makes no trace per request.
 */
export function stateDownError(): ChannelError {
  return STATE_DOWN;
}

/** The 503 of a service that is stopping. */
export function shuttingDownError(): ChannelError {
  return new ChannelError("shutting_down", "The service is shutting down; retry shortly.", {
    status: 503,
    retryable: true,
    retryAfterSeconds: RETRY_AFTER_SECONDS.shuttingDown,
  });
}

/** The 409 of a duplicate `Idempotency-Key` whose first request is still being accepted. */
export function requestInProgressError(): ChannelError {
  return new ChannelError(
    "request_in_progress",
    "A request with this Idempotency-Key is still being accepted; retry shortly.",
    { status: 409, retryable: true, retryAfterSeconds: RETRY_AFTER_SECONDS.requestInProgress },
  );
}

/**
 * The 422 of an `Idempotency-Key` that answers for a request with another body, as the IETF
 * draft on the header asks: answering the first message's 200 would drop this one unseen.
 * Not retryable: the same request gets the same answer until the key expires.
 */
export function idempotencyKeyReusedError(): ChannelError {
  return new ChannelError(
    "idempotency_key_reused",
    "This Idempotency-Key was used for a request with another body; send a new message with a key of its own.",
    { status: 422, retryable: false },
  );
}

/**
 * The 429 of a client address that failed to authenticate too often on a channel. Its
 * `Retry-After` is not from the table: it is when the address's oldest failure leaves the
 * window. It names no secret, and is answered before any secret is compared.
 */
export function tooManyFailuresError(retryAfterSeconds: number): ChannelError {
  return new ChannelError(
    "too_many_requests",
    "Too many failed authentications from this address; no request from it is checked until Retry-After has passed.",
    { status: 429, retryable: true, retryAfterSeconds },
  );
}

const NOT_FOUND = sharedRefusal("not_found", "No endpoint is served at this path.", { status: 404 });

/** The 404 of a path no route serves: one shared, frozen error ({@link sharedRefusal}), as scanners send many. */
export function notFoundError(): ChannelError {
  return NOT_FOUND;
}
