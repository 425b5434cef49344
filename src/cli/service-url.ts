import { errorMessage } from "../core/channel-error.js";
import { isHttpUrl } from "../core/http/http-url.js";
import { UsageError } from "./usage-error.js";

/** `--url` as the admin commands take it: a service's absolute http(s) base URL, or a usage error. */
export function checkServiceUrl(raw: string): string {
  if (isHttpUrl(raw)) return raw;
  throw new UsageError(`--url must be the service's base URL, e.g. http://127.0.0.1:8090 (got '${raw}')`);
}

/**
 * Why a call to the service at `url` failed, in a line: Node's fetch says only "fetch failed",
 * and the reason (a refused connection, an unknown host, a certificate) is its cause.
 */
export function serviceCallError(url: string, error: unknown): string {
  const cause = error instanceof Error && error.cause !== undefined ? `: ${errorMessage(error.cause)}` : "";
  return `${url}: ${errorMessage(error)}${cause}\n`;
}
