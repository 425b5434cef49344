import { describe, expect, it } from "vitest";
import {
  backoffDelayMs,
  DEFAULT_RETRY_POLICY,
  nextDelayMs,
  parseRetryAfterMs,
} from "../../../src/core/lifecycle/retry-policy.js";

const policy = { initialDelayMs: 1_000, maxDelayMs: 600_000, maxAttempts: 12, maxAgeMs: 86_400_000 };

describe("retry policy", () => {
  it("has the documented defaults", () => {
    expect(DEFAULT_RETRY_POLICY).toEqual(policy);
  });

  it("doubles the jitter ceiling per failed attempt up to max_delay_ms", () => {
    const ceiling = (attempts: number) => backoffDelayMs(attempts, policy, () => 0.999_999_9);
    expect(ceiling(1)).toBe(999);
    expect(ceiling(2)).toBe(1_999);
    expect(ceiling(4)).toBe(7_999);
    expect(ceiling(30)).toBe(599_999);
  });

  it("draws uniformly below the ceiling (full jitter)", () => {
    expect(backoffDelayMs(3, policy, () => 0)).toBe(0);
    expect(backoffDelayMs(3, policy, () => 0.5)).toBe(2_000);
  });

  it("honours Retry-After above the backoff, capped at max_delay_ms", () => {
    expect(nextDelayMs(1, policy, () => 0, 5_000)).toBe(5_000);
    expect(nextDelayMs(1, policy, () => 0, 10_000_000)).toBe(600_000);
    expect(nextDelayMs(3, policy, () => 0.5, 10)).toBe(2_000);
  });

  // Neither seconds nor an HTTP-date; V8's Date.parse reads most of them as a date long past ("now").
  it.each(["-1", "1.5", "5, 5", "in 5", "2026-01-01T00:00:30Z", "Thu, 01 Jan 2026 00:00:30 +0000"])(
    "ignores Retry-After %j, which is neither seconds nor an HTTP date",
    (value) => {
      expect(parseRetryAfterMs(value, Date.parse("2026-01-01T00:00:00Z"))).toBeUndefined();
    },
  );

  it("parses Retry-After as seconds or an HTTP date", () => {
    const now = Date.parse("2026-01-01T00:00:00Z");
    expect(parseRetryAfterMs("7", now)).toBe(7_000);
    expect(parseRetryAfterMs("Thu, 01 Jan 2026 00:00:30 GMT", now)).toBe(30_000);
    expect(parseRetryAfterMs("Wed, 31 Dec 2025 00:00:00 GMT", now)).toBe(0);
    expect(parseRetryAfterMs("soon", now)).toBeUndefined();
    expect(parseRetryAfterMs("Thursday, 01-Jan-26 00:00:30 GMT", now)).toBe(30_000);
    expect(parseRetryAfterMs("Thu Jan  1 00:00:30 2026", now)).toBe(30_000);
    expect(parseRetryAfterMs(null, now)).toBeUndefined();
  });
});
