/** When and how often a failed brain call or delivery is tried again. */
export interface RetryPolicy {
  /** Upper bound of the first backoff, in ms. */
  readonly initialDelayMs: number;
  /** Largest backoff, and the cap on an honoured `Retry-After`, in ms. */
  readonly maxDelayMs: number;
  /** Attempts in all, the first included. */
  readonly maxAttempts: number;
  /** No attempt starts later than this after the first one, in ms. */
  readonly maxAgeMs: number;
}

/** The defaults: 1 s doubling to 10 min, at most 12 attempts or 24 h. */
export const DEFAULT_RETRY_POLICY: RetryPolicy = {
  initialDelayMs: 1_000,
  maxDelayMs: 600_000,
  maxAttempts: 12,
  maxAgeMs: 86_400_000,
};

/**
 * Exponential backoff with full jitter: a uniform draw in [0, min(max, initial × 2^(n−1))]
 * after the n-th failed attempt. Jitter keeps many failing messages from retrying in step.
 * `random` returns a number in [0, 1); tests inject it.
 */
export function backoffDelayMs(failedAttempts: number, policy: RetryPolicy, random: () => number): number {
  const exponent = Math.max(0, failedAttempts - 1);
  const ceiling = Math.min(policy.maxDelayMs, policy.initialDelayMs * 2 ** Math.min(exponent, 52));
  return Math.floor(random() * ceiling);
}

// The three forms of an HTTP-date (RFC 9110, section 5.6.7); asctime's carries no zone and is GMT.
const MONTH = "(?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec)";
const TIME = "\\d{2}:\\d{2}:\\d{2}";
const IMF_FIXDATE = new RegExp(`^(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun), \\d{2} ${MONTH} \\d{4} ${TIME} GMT$`);
const RFC850_DATE = new RegExp(`^(?:Mon|Tues|Wednes|Thurs|Fri|Satur|Sun)day, \\d{2}-${MONTH}-\\d{2} ${TIME} GMT$`);
const ASCTIME = new RegExp(`^(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun) ${MONTH} [ \\d]\\d ${TIME} \\d{4}$`);

/**
 * Parses a `Retry-After` header (delay-seconds or an HTTP date) into milliseconds from `now`.
 * Returns undefined for an absent or unreadable value.
 */
export function parseRetryAfterMs(value: string | null | undefined, now: number): number | undefined {
  if (value === null || value === undefined) return undefined;
  const trimmed = value.trim();
  if (/^\d+$/.test(trimmed)) return Number(trimmed) * 1000;
  // Only an HTTP-date: Date.parse alone reads "-1", "1.5" or a repeated header joined by a comma as
  // a date long past, which would be "now", and a down receiver's probes would follow it.
  const asctime = ASCTIME.test(trimmed);
  if (!IMF_FIXDATE.test(trimmed) && !RFC850_DATE.test(trimmed) && !asctime) return undefined;
  const date = Date.parse(asctime ? `${trimmed} GMT` : trimmed);
  return Number.isNaN(date) ? undefined : Math.max(0, date - now);
}

/**
 * The wait before the next attempt after `failedAttempts` failures: the backoff, raised to
 * the receiver's `Retry-After` when it asks for more, and capped at `maxDelayMs`.
 */
export function nextDelayMs(
  failedAttempts: number,
  policy: RetryPolicy,
  random: () => number,
  retryAfterMs: number | undefined,
): number {
  const backoff = backoffDelayMs(failedAttempts, policy, random);
  return Math.min(policy.maxDelayMs, Math.max(backoff, retryAfterMs ?? 0));
}
