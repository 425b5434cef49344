import { errorMessage } from "../core/channel-error.js";
import { isHttpUrl } from "../core/http/http-url.js";
import { redactUrl } from "../core/log/redact-url.js";
import { UsageError } from "./usage-error.js";

/** `--url` as the admin commands take it: a service's absolute http(s) base URL, or a usage error. */
export function checkServiceUrl(raw: string): string {
  if (isHttpUrl(raw)) return raw;
  // What was given may hold a secret (credentials, a token in the query): only its shape is shown.
  throw new UsageError(`--url must be the service's base URL, e.g. http://127.0.0.1:8090 (got ${shapeOf(raw)})`);
}

function shapeOf(raw: string): string {
  // A URL of another scheme ("ws://", "ftp://"): shown without its credentials and query.
  if (/^[a-z][a-z0-9+.-]*:\/\/[^/]/i.test(raw) && URL.canParse(raw)) return `'${safeUrl(raw)}', not an http(s) URL`;
  // Credentials or a query are secrets whatever the rest: without "//" a URL parser reads
  // "admin:secret@host" as a scheme and a path, so what it would redact is no guide.
  return /[@?#]/.test(raw) ? `a value of ${raw.length} characters that is not a URL` : `'${raw}'`;
}

/** `url` as given when it holds nothing secret-shaped, else without its credentials and query. */
function safeUrl(url: string): string {
  if (!URL.canParse(url)) return "(invalid url)";
  const { username, password, search, hash } = new URL(url);
  return username === "" && password === "" && search === "" && hash === "" ? url : redactUrl(url);
}

/**
 * Why a call to the service at `url` failed, in a line: Node's fetch says only "fetch failed",
 * and the reason (a refused connection, an unknown host, a certificate) is its cause.
 */
export function serviceCallError(url: string, error: unknown): string {
  const cause = error instanceof Error && error.cause !== undefined ? `: ${errorMessage(error.cause)}` : "";
  // The URL's credentials and query are never printed: they may hold a secret.
  const shown = safeUrl(url);
  return `${shown}: ${scrubbed(`${errorMessage(error)}${cause}`, url, shown)}\n`;
}

/**
 * `text` with `url` shown as `shown`, and its credentials, query and fragment taken out wherever
 * else a URL quotes them: what was fetched may be spelled otherwise (its trailing slashes
 * trimmed, say), and an error that quotes it would quote the secret with it. Each is taken out
 * with what marks it in a URL (`…@`, `?`, `#`), so that a short one leaves other words alone.
 */
function scrubbed(text: string, url: string, shown: string): string {
  let out = text.replaceAll(url, shown);
  if (!URL.canParse(url)) return out;
  const { username, password, search, hash } = new URL(url);
  // However the URL is spelled (with "//" or without), its credentials end with "@".
  if (username !== "" || password !== "") {
    out = out.replaceAll(`${username}${password === "" ? "" : `:${password}`}@`, "***@");
  }
  for (const part of [search, hash]) if (part !== "") out = out.replaceAll(part, "");
  return out;
}
