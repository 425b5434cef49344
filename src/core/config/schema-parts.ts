import { z } from "zod";
import { fetchBadPort } from "../http/fetch-bad-ports.js";
import { hasUserinfo, isHttpUrl } from "../http/http-url.js";
import { MAX_TIMER_MS } from "../timer-limit.js";

/** What an environment variable's name may be. */
export const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/**
 * A value that reads as a secret rather than a variable's name: long, and mixing lower and upper
 * case letters with digits, as generated secrets and API keys do and variable names do not; or
 * long hex with letters and digits (`openssl rand -hex`), which no variable name is either.
 */
export function looksLikeSecret(name: string): boolean {
  if (name.length < 20 || !/\d/.test(name)) return false;
  const mixedCase = /[a-z]/.test(name) && /[A-Z]/.test(name);
  const hex = /^[0-9a-fA-F]+$/.test(name) && /[a-fA-F]/.test(name);
  return mixedCase || hex;
}

/** The name of an environment variable that holds a secret (`token_env`, `api_key_env`, …). */
export const envName = (example: string) =>
  z
    .string({ error: `must be the name of an environment variable, e.g. ${example}` })
    .regex(ENV_NAME, {
      error: `must be an environment variable name ([A-Za-z_][A-Za-z0-9_]*), e.g. ${example}`,
    })
    // Said without the value, which would put the secret in every log and terminal it reaches.
    .refine((value) => !looksLikeSecret(value), {
      error: `looks like a secret itself (not shown), where the name of the environment variable that holds it goes, e.g. ${example}`,
      params: {
        fix: `export the secret under a name, e.g. ${example}, and write that name here; the secret written here is in this file now, so make a new one (npx webhook-channel secret)`,
      },
    });

/** An absolute http(s) URL without user:password, since secrets belong in the environment. */
export const httpUrl = (example: string) => {
  const error = `must be an absolute http: or https: URL, e.g. "${example}"`;
  return z
    .string({ error })
    .refine(isHttpUrl, {
      error: (issue) => {
        const why = typeof issue.input === "string" ? whyNotUrl(issue.input) : undefined;
        return why === undefined ? error : `${error}: ${why}`;
      },
      params: { fix: `write the whole URL, its scheme included, e.g. "${example}"` },
    })
    .refine((value) => !hasUserinfo(value), {
      error: "must not contain a user name or password; secrets belong in the environment (use a *_env key)",
    });
};

/** What most often keeps a URL from parsing, in words: a space, or a port past 65535. */
function whyNotUrl(value: string): string | undefined {
  if (/\s/.test(value)) return "it holds a space or a line break; remove it";
  const port = /^[a-z][a-z0-9+.-]*:\/\/[^/?#]*:(\d+)(?:[/?#]|$)/i.exec(value)?.[1];
  if (port !== undefined && Number(port) > 65_535) return `port ${port} is past 65535`;
  return undefined;
}

/**
 * An {@link httpUrl} the service calls with `fetch` (a brain's, the operator events'), on every
 * runtime: a port that fetch refuses would fail every call, so it is refused here, with the fix.
 */
export const fetchedUrl = (example: string) =>
  httpUrl(example).refine((value) => fetchBadPort(value) === undefined, {
    error: (issue) =>
      `port ${typeof issue.input === "string" ? fetchBadPort(issue.input) : "?"} is a "bad port" of the Fetch standard: fetch refuses to connect to it, so every call would fail with "bad port"`,
    params: {
      fix: "use another port: move the server to one fetch allows (e.g. 8000), or put a proxy on one in front of it",
    },
  });

/**
 * The rule of a millisecond setting that becomes a timer (a time limit, a backoff, the stop's
 * wait): a longer one would fire at once, cutting a stop or every POST short.
 */
export const TIMER_MS_LIMIT = {
  value: MAX_TIMER_MS,
  error: `must be at most ${MAX_TIMER_MS} ms (about 24.8 days), the longest a timer can wait`,
} as const;
