import { ChannelError, sharedRefusal } from "../channel-error.js";

const BEARER = /^bearer +(.+)$/i;

/**
 * Compares a presented token with the secret in time that depends only on the secret's
 * length, so response timing reveals nothing about how much of a guess was right.
 */
export function tokenMatches(presented: string, secret: string): boolean {
  let diff = presented.length ^ secret.length;
  for (let index = 0; index < secret.length; index += 1) {
    diff |= (presented.charCodeAt(index) | 0) ^ secret.charCodeAt(index);
  }
  return diff === 0;
}

/**
 * Check 1: `Authorization: Bearer <secret>`, scheme in any case, with one of `secrets` (two
 * while a secret is being rotated). Every secret is compared, even after one matched, so the
 * time taken does not tell which one did.
 */
export function bearerMatches(authorization: string | null, secrets: readonly string[]): boolean {
  const match = authorization === null ? null : BEARER.exec(authorization);
  const presented = match?.[1];
  if (presented === undefined) return false;
  let matched = false;
  for (const secret of secrets) matched = tokenMatches(presented, secret) || matched;
  return matched;
}

const UNAUTHORIZED = sharedRefusal("unauthorized", "A valid `Authorization: Bearer <secret>` header is required.", {
  status: 401,
});

/**
 * The 401 of check 1. It says what is missing and never repeats what was presented; one shared,
 * frozen error ({@link sharedRefusal}), as a flood of guesses gets it for every request.
 */
export function unauthorizedError(): ChannelError {
  return UNAUTHORIZED;
}

/** What nearly every client sends: accepted without taking the header apart. */
const COMMON_JSON_TYPES: ReadonlySet<string> = new Set([
  "application/json",
  "application/json; charset=utf-8",
  "application/json;charset=utf-8",
  "application/json; charset=UTF-8",
]);

/** The 415 of check 2: one shared, frozen error ({@link sharedRefusal}). */
const UNSUPPORTED_MEDIA_TYPE = sharedRefusal(
  "unsupported_media_type",
  "The body must be sent as `Content-Type: application/json` (a `charset=utf-8` parameter is accepted).",
  { status: 415 },
);

/** Check 2: `application/json`, with no charset other than UTF-8. */
export function checkJsonContentType(contentType: string | null): void {
  if (contentType !== null && COMMON_JSON_TYPES.has(contentType)) return;
  if (contentType !== null) {
    const semicolon = contentType.indexOf(";");
    const essence = semicolon === -1 ? contentType : contentType.slice(0, semicolon);
    if (essence.trim().toLowerCase() === "application/json") {
      const parameters = semicolon === -1 ? "" : contentType.slice(semicolon);
      let utf8Only = true;
      for (const [, name = "", value = ""] of parameters.matchAll(PARAMETER)) {
        if (name.toLowerCase() === "charset" && unquoted(value).toLowerCase() !== "utf-8") utf8Only = false;
      }
      if (utf8Only) return;
    }
  }
  throw UNSUPPORTED_MEDIA_TYPE;
}

const ENCODED = new ChannelError(
  "unsupported_media_type",
  "The body must be sent without a Content-Encoding (gzip, br and the other codings are not read).",
  { status: 415 },
);

/**
 * Check 2, continued: no content coding. The body is read as it arrives; a compressed one would
 * fail as JSON with a misleading reason, and one labelled compressed but sent plain would be
 * read where its sender meant something else. RFC 9110 answers a coding not accepted with 415.
 */
export function checkContentEncoding(contentEncoding: string | null): void {
  if (contentEncoding === null) return;
  for (const coding of contentEncoding.split(",")) {
    const name = coding.trim().toLowerCase();
    if (name !== "" && name !== "identity") throw ENCODED;
  }
}

/**
 * One `; name=value` parameter of a media type (RFC 9110), its value a token or a quoted string,
 * so that a `;` or `charset=` inside quotes belongs to the value; a parameter without a value is
 * passed over, as other parameters are ignored.
 */
const PARAMETER = /;\s*([^\s;="]+)\s*=\s*("(?:[^"\\]|\\.)*"|[^;]*)/g;

/** A parameter's value without its quotes and escapes. */
function unquoted(value: string): string {
  const trimmed = value.trim();
  return trimmed.startsWith('"') ? trimmed.slice(1, -1).replace(/\\(.)/g, "$1") : trimmed;
}

const utf8 = new TextDecoder("utf-8", { fatal: true, ignoreBOM: false });

/** Check 4: the body is UTF-8 JSON whose top level is an object. */
export function parseJsonObject(bytes: Uint8Array): Record<string, unknown> {
  let value: unknown;
  try {
    value = JSON.parse(utf8.decode(bytes));
  } catch (error) {
    // The parser's own message quotes the body's first bytes: only the position is kept, so that
    // a problem (and a log line of it) never repeats what was sent.
    const at = error instanceof SyntaxError ? /position (\d+)/.exec(error.message)?.[1] : undefined;
    const detail =
      error instanceof SyntaxError
        ? `The body is not valid JSON${at === undefined ? "" : ` (at character ${at})`}.`
        : "The body is not valid JSON: it is not valid UTF-8.";
    throw new ChannelError("invalid_json", detail, { status: 400 });
  }
  if (value === null || typeof value !== "object" || Array.isArray(value)) {
    throw new ChannelError("invalid_json", "The body must be a JSON object at the top level.", { status: 400 });
  }
  return value as Record<string, unknown>;
}
