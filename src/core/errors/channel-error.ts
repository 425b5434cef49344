/** Stable machine-readable error codes. Clients and operators may match on these; never rename one. */
export type ErrorCode =
  | "unauthorized"
  | "unsupported_media_type"
  | "payload_too_large"
  | "invalid_json"
  | "invalid_message"
  | "buffer_full"
  | "shutting_down"
  | "request_in_progress"
  | "not_found"
  | "method_not_allowed"
  | "internal_error"
  | "brain_failed"
  | "delivery_failed"
  | "config_invalid";

/** One field-level problem in an inbound message, named by the JSON key the client sent. */
export interface FieldError {
  readonly field: string;
  readonly message: string;
}

/** Options of a {@link ChannelError}. */
export interface ChannelErrorOptions {
  /** HTTP status when the error leaves as a response. */
  readonly status?: number;
  /** True when trying the same thing again later may succeed. */
  readonly retryable?: boolean;
  readonly errors?: readonly FieldError[];
  /** Seconds a client should wait before retrying (sent as `Retry-After`). */
  readonly retryAfterSeconds?: number;
  /** Facts for logs (an upstream status, a URL); never a secret or message text. */
  readonly details?: Readonly<Record<string, unknown>>;
  readonly cause?: unknown;
}

/**
 * The one error type of the service: every failure that crosses a module boundary is a
 * ChannelError, so callers can decide on `code` and `retryable` instead of parsing messages.
 */
export class ChannelError extends Error {
  readonly code: ErrorCode;
  readonly status: number;
  readonly retryable: boolean;
  readonly errors: readonly FieldError[] | undefined;
  readonly retryAfterSeconds: number | undefined;
  readonly details: Readonly<Record<string, unknown>>;

  constructor(code: ErrorCode, message: string, options: ChannelErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = "ChannelError";
    this.code = code;
    this.status = options.status ?? 500;
    this.retryable = options.retryable ?? false;
    this.errors = options.errors;
    this.retryAfterSeconds = options.retryAfterSeconds;
    this.details = options.details ?? {};
  }
}

/** Narrows an unknown thrown value to a ChannelError. */
export function isChannelError(value: unknown): value is ChannelError {
  return value instanceof ChannelError;
}

/** Message text of any thrown value, for logs. */
export function errorMessage(value: unknown): string {
  return value instanceof Error ? value.message : String(value);
}
