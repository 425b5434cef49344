/**
 * A URL without credentials or query, safe to log: both can carry secrets (tokens in a query
 * string are common), the scheme, host and path are what an operator needs.
 */
export function redactUrl(url: string): string {
  if (!URL.canParse(url)) return "(invalid url)";
  const parsed = new URL(url);
  return `${parsed.protocol}//${parsed.host}${parsed.pathname}`;
}
