import type { ChannelError, ErrorCode } from "../channel-error.js";

const TITLES: Readonly<Record<ErrorCode, string>> = {
  unauthorized: "Unauthorized",
  unsupported_media_type: "Unsupported Media Type",
  payload_too_large: "Payload Too Large",
  invalid_json: "Invalid JSON",
  invalid_message: "Invalid Message",
  buffer_full: "Inbound Buffer Full",
  state_unavailable: "State Unavailable",
  shutting_down: "Shutting Down",
  request_in_progress: "Request In Progress",
  idempotency_key_reused: "Idempotency Key Reused",
  channel_not_configured: "Channel Not Configured",
  too_many_requests: "Too Many Requests",
  not_found: "Not Found",
  method_not_allowed: "Method Not Allowed",
  bad_request: "Bad Request",
  request_timeout: "Request Timeout",
  expectation_failed: "Expectation Failed",
  not_implemented: "Not Implemented",
  headers_too_large: "Request Header Fields Too Large",
  internal_error: "Internal Server Error",
  brain_failed: "Brain Failed",
  delivery_failed: "Delivery Failed",
  config_invalid: "Invalid Configuration",
  lane_fenced: "Lane Fenced",
};

/**
 * Base of the `type` URIs: each code's heading in docs/http-api.md, whose explicit
 * `<a id="error-<code>">` anchor keeps the URI stable and dereferenceable (a test checks both).
 */
const TYPE_BASE = "https://github.com/webhook-channel/webhook-channel/blob/main/docs/http-api.md#error-";

/** An HTTP answer as plain parts, for servers that do not speak Web `Response`. */
export interface ProblemParts {
  readonly status: number;
  readonly headers: Readonly<Record<string, string>>;
  readonly body: string;
}

/**
 * Renders a ChannelError as an RFC 9457 `application/problem+json` answer, with the headers
 * its code calls for (`WWW-Authenticate` on 401, `Retry-After` when set) and any `extra` ones,
 * which take precedence (the admin API sends its own realm). The parts of a frozen error are
 * rendered once and shared, frozen: a caller that adds a header copies them first.
 */
export function renderProblem(error: ChannelError, extra?: Readonly<Record<string, string>>): ProblemParts {
  if (extra !== undefined) return render(error, extra);
  // A frozen error (a full buffer's) is answered many times a second the same way.
  if (!Object.isFrozen(error)) return render(error, {});
  let parts = rendered.get(error);
  if (parts === undefined) {
    const { status, headers, body } = render(error, {});
    parts = Object.freeze({ status, headers: Object.freeze(headers), body });
    rendered.set(error, parts);
  }
  return parts;
}

/** The parts of each frozen error, rendered when first answered. */
const rendered = new WeakMap<ChannelError, ProblemParts>();

function render(error: ChannelError, extra: Readonly<Record<string, string>>): ProblemParts {
  const body: Record<string, unknown> = {
    type: `${TYPE_BASE}${error.code}`,
    title: TITLES[error.code],
    status: error.status,
    detail: error.message,
    code: error.code,
  };
  if (error.errors !== undefined) body.errors = error.errors;
  const headers: Record<string, string> = { "content-type": "application/problem+json" };
  if (error.code === "unauthorized") headers["www-authenticate"] = 'Bearer realm="webhook-channel"';
  if (error.retryAfterSeconds !== undefined) headers["retry-after"] = String(error.retryAfterSeconds);
  // Last, so that a caller's own challenge (the admin API's realm) is the one sent.
  Object.assign(headers, extra);
  return { status: error.status, headers, body: JSON.stringify(body) };
}

/** The same problem as a Web `Response`. */
export function problemResponse(error: ChannelError, extra?: Readonly<Record<string, string>>): Response {
  const { body, headers, status } = renderProblem(error, extra);
  return new Response(body, { status, headers });
}
