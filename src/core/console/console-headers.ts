/**
 * The headers of the console's page and its script, style and icon. The page holds no data
 * and runs only its own same-origin script, so the policy allows nothing else: no inline
 * script or style, no other origin, no framing, no form posted elsewhere, no plugins. The
 * secret the page is given leaves only in the `Authorization` header of its own `fetch`es, and
 * `no-referrer` keeps even the page's address out of any request.
 */
export const CONSOLE_HEADERS: Readonly<Record<string, string>> = {
  "content-security-policy": [
    "default-src 'self'",
    "script-src 'self'",
    "style-src 'self'",
    "img-src 'self'",
    "connect-src 'self'",
    "object-src 'none'",
    "base-uri 'none'",
    "form-action 'self'",
    "frame-ancestors 'none'",
  ].join("; "),
  "x-frame-options": "DENY",
  "referrer-policy": "no-referrer",
  "cache-control": "no-store",
  "x-content-type-options": "nosniff",
  "cross-origin-opener-policy": "same-origin",
  "cross-origin-resource-policy": "same-origin",
};
