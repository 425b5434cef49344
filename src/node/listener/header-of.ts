import type { IncomingMessage } from "node:http";

/**
 * Fields of which Node keeps only the first line in `request.headers` (among those the accept
 * flow reads). A request that repeats one is read with every line joined, as a Web `Headers`
 * reads it on the Hono route and on Workers, so that two `Authorization` lines are not taken
 * for the first one alone.
 */
const FIRST_KEPT = new Set(["authorization", "content-type"]);

/** A request header (lower-case `name`) as one string, repeated lines joined with `, `; null when absent. */
export function headerOf(request: IncomingMessage, name: string): string | null {
  if (FIRST_KEPT.has(name)) return everyLine(request.rawHeaders, name);
  const value = request.headers[name];
  if (value === undefined) return null;
  return Array.isArray(value) ? value.join(", ") : value;
}

/** Every line of `name` in the raw header list (name, value, name, value, …), joined. */
function everyLine(raw: readonly string[], name: string): string | null {
  let found: string | null = null;
  for (let index = 0; index < raw.length; index += 2) {
    const field = raw[index];
    // The length first: most fields differ in it, and it costs no lower-casing.
    if (field === undefined || field.length !== name.length || field.toLowerCase() !== name) continue;
    const value = raw[index + 1] ?? "";
    found = found === null ? value : `${found}, ${value}`;
  }
  return found;
}
