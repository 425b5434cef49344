/** Stable machine-readable error codes. Clients and operators may match on these; never rename one. */
export type ErrorCode =
  | "unauthorized"
  | "unsupported_media_type"
  | "payload_too_large"
  | "invalid_json"
  | "invalid_message"
  | "buffer_full"
  | "state_unavailable"
  | "shutting_down"
  | "request_in_progress"
  | "idempotency_key_reused"
  | "channel_not_configured"
  | "too_many_requests"
  | "not_found"
  | "method_not_allowed"
  | "bad_request"
  | "request_timeout"
  | "expectation_failed"
  | "not_implemented"
  | "headers_too_large"
  | "internal_error"
  | "brain_failed"
  | "delivery_failed"
  | "config_invalid"
  | "lane_fenced";

/** One field-level problem in an inbound message, named by the JSON key the client sent. */
export interface FieldError {
  readonly field: string;
  readonly message: string;
}

/**
 * Facts about the other side of a failed call (a reply receiver or a model server). They
 * decide retries and fill log lines; none of them ever holds a secret or message text.
 */
export interface UpstreamFacts {
  /** The HTTP status the upstream answered with. */
  readonly upstreamStatus?: number;
  /** How long the upstream asked us to wait (`Retry-After`, `retry-after-ms`), in ms. */
  readonly retryAfterMs?: number;
  /** True when the upstream did not answer within the timeout. */
  readonly timedOut?: boolean;
  /** The upstream URL, already redacted (no credentials, no query). */
  readonly url?: string;
  /** The brain that failed, for brain errors. */
  readonly brain?: string;
  /** The model a brain asked for, when it names one. */
  readonly model?: string;
  /** The error `type` and `code` an upstream put in its error body (OpenAI style). */
  readonly upstreamErrorType?: string;
  readonly upstreamErrorCode?: string;
  /** The environment variable a configuration error is about (its name, never its value). */
  readonly variable?: string;
  /** Epoch ms a paused brain resumes: the brain was not asked. */
  readonly pausedUntil?: number;
  /**
   * What an upstream said of its failure, in its own words. Kept out of `message`: a server may
   * quote the message it was sent (a validation error), so it goes only where message text may
   * (a dead letter, a `debug` line), never into `warn` or `error` lines, operator events or a
   * timeline that keeps no text.
   */
  readonly upstreamMessage?: string;
}

/** Options of a {@link ChannelError}. */
export interface ChannelErrorOptions extends UpstreamFacts {
  /** HTTP status when the error leaves as a response. */
  readonly status?: number;
  /** True when trying the same thing again later may succeed. */
  readonly retryable?: boolean;
  readonly errors?: readonly FieldError[];
  /** Seconds a client should wait before retrying (sent as `Retry-After`). */
  readonly retryAfterSeconds?: number;
  readonly cause?: unknown;
}

/**
 * The one error type of the service: every failure that crosses a module boundary is a
 * ChannelError, so callers decide on `code`, `retryable` and the typed upstream facts
 * instead of parsing messages.
 */
export class ChannelError extends Error {
  readonly code: ErrorCode;
  readonly status: number;
  readonly retryable: boolean;
  readonly errors: readonly FieldError[] | undefined;
  readonly retryAfterSeconds: number | undefined;
  readonly upstreamStatus: number | undefined;
  readonly retryAfterMs: number | undefined;
  readonly timedOut: boolean;
  readonly url: string | undefined;
  readonly brain: string | undefined;
  readonly model: string | undefined;
  readonly upstreamErrorType: string | undefined;
  readonly upstreamErrorCode: string | undefined;
  readonly variable: string | undefined;
  readonly pausedUntil: number | undefined;
  readonly upstreamMessage: string | undefined;

  constructor(code: ErrorCode, message: string, options: ChannelErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = "ChannelError";
    this.code = code;
    this.status = options.status ?? 500;
    this.retryable = options.retryable ?? false;
    this.errors = options.errors;
    this.retryAfterSeconds = options.retryAfterSeconds;
    this.upstreamStatus = options.upstreamStatus;
    this.retryAfterMs = options.retryAfterMs;
    this.timedOut = options.timedOut ?? false;
    this.url = options.url;
    this.brain = options.brain;
    this.model = options.model;
    this.upstreamErrorType = options.upstreamErrorType;
    this.upstreamErrorCode = options.upstreamErrorCode;
    this.variable = options.variable;
    this.pausedUntil = options.pausedUntil;
    this.upstreamMessage = options.upstreamMessage;
  }

  /** The upstream facts as snake_case log fields; absent facts are left out. */
  logFields(): Readonly<Record<string, string | number | boolean>> {
    const fields: Record<string, string | number | boolean> = {};
    if (this.upstreamStatus !== undefined) fields.upstream_status = this.upstreamStatus;
    if (this.retryAfterMs !== undefined) fields.retry_after_ms = this.retryAfterMs;
    if (this.timedOut) fields.timeout = true;
    if (this.url !== undefined) fields.url = this.url;
    if (this.brain !== undefined) fields.brain = this.brain;
    if (this.model !== undefined) fields.model = this.model;
    if (this.upstreamErrorType !== undefined) fields.upstream_error_type = this.upstreamErrorType;
    if (this.upstreamErrorCode !== undefined) fields.upstream_error_code = this.upstreamErrorCode;
    if (this.variable !== undefined) fields.variable = this.variable;
    return fields;
  }
}

/**
 * A ChannelError made once and frozen, for a refusal that carries nothing of the request: a
 * service past its knee, or under a flood of bad requests, answers it many times a second, and
 * an `Error` captures a stack trace where it is built, which no one reads for a refusal. Its
 * problem is rendered once too (`renderProblem`).
 */
export function sharedRefusal(code: ErrorCode, message: string, options: ChannelErrorOptions): ChannelError {
  return Object.freeze(new ChannelError(code, message, options));
}

/** Narrows an unknown thrown value to a ChannelError. */
export function isChannelError(value: unknown): value is ChannelError {
  return value instanceof ChannelError;
}

/** Any thrown value as a ChannelError: ours as they are, anything else an `internal_error`. */
export function toChannelError(value: unknown, retryable = true): ChannelError {
  if (isChannelError(value)) return value;
  return new ChannelError("internal_error", errorMessage(value), { retryable, cause: value });
}

/** Message text of any thrown value, for logs. */
export function errorMessage(value: unknown): string {
  return value instanceof Error ? value.message : String(value);
}
