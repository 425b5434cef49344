import type { ChannelError, ErrorCode } from "../errors/channel-error.js";

const TITLES: Readonly<Record<ErrorCode, string>> = {
  unauthorized: "Unauthorized",
  unsupported_media_type: "Unsupported Media Type",
  payload_too_large: "Payload Too Large",
  invalid_json: "Invalid JSON",
  invalid_message: "Invalid Message",
  buffer_full: "Inbound Buffer Full",
  shutting_down: "Shutting Down",
  request_in_progress: "Request In Progress",
  not_found: "Not Found",
  method_not_allowed: "Method Not Allowed",
  internal_error: "Internal Server Error",
  brain_failed: "Brain Failed",
  delivery_failed: "Delivery Failed",
  config_invalid: "Invalid Configuration",
};

/** Base of the `type` URIs; each code gets a fragment so the URI stays stable and dereferenceable. */
const TYPE_BASE = "https://github.com/webhook-channel/webhook-channel#error-";

/**
 * Renders a ChannelError as an RFC 9457 `application/problem+json` response. Extra headers
 * (`Allow`, `WWW-Authenticate`) are the caller's, because only the route knows them.
 */
export function problemResponse(error: ChannelError, headers: Record<string, string> = {}): Response {
  const body: Record<string, unknown> = {
    type: `${TYPE_BASE}${error.code}`,
    title: TITLES[error.code],
    status: error.status,
    detail: error.message,
    code: error.code,
  };
  if (error.errors !== undefined) body.errors = error.errors;
  const allHeaders: Record<string, string> = { "content-type": "application/problem+json", ...headers };
  if (error.retryAfterSeconds !== undefined) allHeaders["retry-after"] = String(error.retryAfterSeconds);
  return new Response(JSON.stringify(body), { status: error.status, headers: allHeaders });
}
