import { errorMessage } from "../../core/channel-error.js";

/** The longest text a diagnostic's arguments add to its line. */
const MAX_ARGUMENTS_TEXT = 1_000;

/**
 * The variables whose values the SDK holds and a diagnostic might quote: the exporter's
 * headers (an API key, as a collector behind a vendor asks) and its endpoints (credentials in
 * the URL).
 */
const SECRET_VARIABLES = [
  "OTEL_EXPORTER_OTLP_HEADERS",
  "OTEL_EXPORTER_OTLP_TRACES_HEADERS",
  "OTEL_EXPORTER_OTLP_ENDPOINT",
  "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT",
];

/**
 * The pieces of `env`'s telemetry variables that must not reach a log line: each header's value
 * and each endpoint's password and query.
 */
export function telemetrySecrets(env: Readonly<Record<string, string | undefined>>): string[] {
  const secrets: string[] = [];
  for (const name of SECRET_VARIABLES) {
    const value = env[name];
    if (value === undefined || value === "") continue;
    if (name.endsWith("_HEADERS")) {
      for (const pair of value.split(",")) {
        const at = pair.indexOf("=");
        const secret = at < 0 ? "" : pair.slice(at + 1).trim();
        if (secret !== "") secrets.push(secret, safeDecode(secret));
      }
      continue;
    }
    try {
      const url = new URL(value);
      if (url.password !== "") secrets.push(url.password, safeDecode(url.password));
      if (url.search !== "") secrets.push(url.search.slice(1));
    } catch {
      // Not a URL: the exporter refuses it with its own words, which quote nothing secret.
    }
  }
  return secrets.filter((secret) => secret.length > 0);
}

/**
 * One line of text for an SDK diagnostic: the SDK's component loggers pass their name first and
 * what happened after it, so the arguments are kept (errors by their message, other values as
 * JSON, bounded), and every known secret is replaced by `[redacted]`.
 */
export function diagText(message: string, args: readonly unknown[], secrets: readonly string[]): string {
  // Each piece whole before any is cut: a secret cut in two would no longer be found.
  const redact = (text: string): string => secrets.reduce((out, secret) => out.replaceAll(secret, "[redacted]"), text);
  let text = redact(message);
  let added = 0;
  for (const arg of args) {
    const part = redact(typeof arg === "string" ? arg : arg instanceof Error ? errorMessage(arg) : jsonOf(arg));
    const room = MAX_ARGUMENTS_TEXT - added;
    if (room <= 0) break;
    const kept = part.length > room ? `${part.slice(0, room)}…` : part;
    text += ` ${kept}`;
    added += kept.length;
  }
  return text;
}

function jsonOf(value: unknown): string {
  try {
    return JSON.stringify(value) ?? String(value);
  } catch {
    return String(value);
  }
}

function safeDecode(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}
