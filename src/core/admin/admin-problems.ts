import { ChannelError } from "../channel-error.js";
import { problemResponse } from "../http/problem-response.js";

/** Default and largest page of the admin API's lists. */
const DEFAULT_LIMIT = 100;
const MAX_LIMIT = 500;

/** A list's `limit` query parameter: absent is the default page, anything else must be 1 to 500. */
export function parseLimit(raw: string | undefined): number {
  if (raw === undefined || raw === "") return DEFAULT_LIMIT;
  const limit = /^\d{1,3}$/.test(raw) ? Number(raw) : Number.NaN;
  if (limit >= 1 && limit <= MAX_LIMIT) return limit;
  throw invalid("limit", `must be a whole number from 1 to ${MAX_LIMIT}`);
}

/** A 400 `invalid_message` naming the query parameter or body field that is wrong. */
export function invalid(field: string, message: string): ChannelError {
  return new ChannelError("invalid_message", `${field === "" ? "The body" : field} ${message}.`, {
    status: 400,
    errors: [{ field, message }],
  });
}

/** The 405 of a path asked with a method it does not answer, with `Allow`. */
export function methodNotAllowed(allow: string): Response {
  return problemResponse(new ChannelError("method_not_allowed", `This path answers ${allow} only.`, { status: 405 }), {
    allow,
  });
}

/**
 * Whether `value` is free of U+0000. No id, channel or conversation holds it (the inbound checks
 * refuse it), and Postgres cannot even look such a text up: asked, it fails as if the state were
 * unavailable, and a client told to retry would retry for ever.
 */
export function holdsNoNul(value: string): boolean {
  return !value.includes("\u0000");
}

/** A text query parameter: undefined when absent or empty, a 400 naming it when it holds U+0000. */
export function queryText(raw: string | undefined, field: string): string | undefined {
  if (raw === undefined || raw === "") return undefined;
  if (holdsNoNul(raw)) return raw;
  throw invalid(field, "must not contain the character U+0000 (NUL)");
}
