import { describe, expect, it } from "vitest";
import type { AuthFailureLimit } from "../../../src/core/auth-limit/auth-failure-limiter.js";
import { createMemoryAuthFailureLimiter } from "../../../src/core/auth-limit/memory-auth-failure-limiter.js";
import { manualClock } from "../../support/brain-harness.js";

const LIMIT: AuthFailureLimit = { max: 20, windowMs: 60_000 };

function failTimes(limiter: ReturnType<typeof createMemoryAuthFailureLimiter>, address: string, times: number): void {
  for (let index = 0; index < times; index += 1) limiter.recordFailure("webhook", address, LIMIT);
}

describe("the memory auth-failure limiter", () => {
  it("lets an address through up to max - 1 failures, and refuses it at max", () => {
    const clock = manualClock();
    const limiter = createMemoryAuthFailureLimiter(clock);
    failTimes(limiter, "203.0.113.1", 19);
    expect(limiter.check("webhook", "203.0.113.1", LIMIT)).toBeUndefined();
    limiter.recordFailure("webhook", "203.0.113.1", LIMIT);
    expect(limiter.check("webhook", "203.0.113.1", LIMIT)).toEqual({ retryAfterSeconds: 60, first: true });
  });

  it("marks only the first refusal of a window, the one that is logged", () => {
    const clock = manualClock();
    const limiter = createMemoryAuthFailureLimiter(clock);
    failTimes(limiter, "203.0.113.1", 20);
    expect(limiter.check("webhook", "203.0.113.1", LIMIT)).toMatchObject({ first: true });
    clock.advance(1_000);
    expect(limiter.check("webhook", "203.0.113.1", LIMIT)).toMatchObject({ first: false });
  });

  it("counts down Retry-After to when the oldest failure leaves the window, then lets one try through", () => {
    const clock = manualClock();
    const limiter = createMemoryAuthFailureLimiter(clock);
    limiter.recordFailure("webhook", "203.0.113.1", LIMIT);
    clock.advance(10_000);
    failTimes(limiter, "203.0.113.1", 19);
    expect(limiter.check("webhook", "203.0.113.1", LIMIT)).toMatchObject({ retryAfterSeconds: 50 });
    clock.advance(49_500);
    expect(limiter.check("webhook", "203.0.113.1", LIMIT)).toMatchObject({ retryAfterSeconds: 1 });
    clock.advance(500);
    // The first failure left the window: 19 remain, so one more try is let through...
    expect(limiter.check("webhook", "203.0.113.1", LIMIT)).toBeUndefined();
    limiter.recordFailure("webhook", "203.0.113.1", LIMIT);
    // ...and a failed one refuses it until the next oldest (10 s later) leaves.
    expect(limiter.check("webhook", "203.0.113.1", LIMIT)).toMatchObject({ retryAfterSeconds: 10 });
    clock.advance(10_000);
    expect(limiter.check("webhook", "203.0.113.1", LIMIT)).toBeUndefined();
  });

  it("frees an address that stops once the window has passed, and forgets it", () => {
    const clock = manualClock();
    const limiter = createMemoryAuthFailureLimiter(clock);
    failTimes(limiter, "203.0.113.1", 25);
    expect(limiter.check("webhook", "203.0.113.1", LIMIT)).toBeDefined();
    clock.advance(60_000);
    expect(limiter.check("webhook", "203.0.113.1", LIMIT)).toBeUndefined();
    expect(limiter.size).toBe(0);
  });

  it("counts addresses and channels apart", () => {
    const clock = manualClock();
    const limiter = createMemoryAuthFailureLimiter(clock);
    failTimes(limiter, "203.0.113.1", 20);
    expect(limiter.check("webhook", "203.0.113.1", LIMIT)).toBeDefined();
    expect(limiter.check("webhook", "203.0.113.2", LIMIT)).toBeUndefined();
    expect(limiter.check("other", "203.0.113.1", LIMIT)).toBeUndefined();
  });

  it("counts an IPv6 client by its /64, and an IPv4-mapped address as IPv4", () => {
    const clock = manualClock();
    const limiter = createMemoryAuthFailureLimiter(clock);
    for (let index = 0; index < 20; index += 1) {
      limiter.recordFailure("webhook", `2001:db8:1:2::${index.toString(16)}`, LIMIT);
    }
    expect(limiter.check("webhook", "2001:db8:1:2:ffff::1", LIMIT)).toBeDefined();
    expect(limiter.check("webhook", "2001:db8:1:3::1", LIMIT)).toBeUndefined();
    failTimes(limiter, "::ffff:198.51.100.4", 20);
    expect(limiter.check("webhook", "198.51.100.4", LIMIT)).toBeDefined();
  });

  it("applies the limit it is given with each call", () => {
    const clock = manualClock();
    const limiter = createMemoryAuthFailureLimiter(clock);
    const strict: AuthFailureLimit = { max: 2, windowMs: 5_000 };
    limiter.recordFailure("webhook", "203.0.113.1", strict);
    limiter.recordFailure("webhook", "203.0.113.1", strict);
    expect(limiter.check("webhook", "203.0.113.1", strict)).toEqual({ retryAfterSeconds: 5, first: true });
  });

  it("keeps at most its capacity of addresses with a million distinct ones failing", () => {
    const clock = manualClock();
    const limiter = createMemoryAuthFailureLimiter(clock, 100_000);
    for (let index = 0; index < 1_000_000; index += 1) {
      limiter.recordFailure("webhook", `10.${(index >> 16) & 0xff}.${(index >> 8) & 0xff}.${index & 0xff}`, LIMIT);
      if (index === 99_999) expect(limiter.size).toBe(100_000);
    }
    expect(limiter.size).toBe(100_000);
    // The oldest were forgotten, the newest are still counted.
    failTimes(limiter, "10.15.66.63", 19);
    expect(limiter.check("webhook", "10.15.66.63", LIMIT)).toBeDefined();
    expect(limiter.size).toBe(100_000);
  });

  it("keeps fewer addresses under a larger max, so that the failure times kept stay bounded", () => {
    const limiter = createMemoryAuthFailureLimiter(manualClock(), 100_000);
    const loose: AuthFailureLimit = { max: 100, windowMs: 60_000 };
    for (let index = 0; index < 50_000; index += 1) {
      limiter.recordFailure("webhook", `10.0.${index >> 8}.${index & 0xff}`, loose);
    }
    expect(limiter.size).toBe(20_000);
  });

  it("does not let a flood of other addresses push out an address that keeps guessing", () => {
    const clock = manualClock();
    const limiter = createMemoryAuthFailureLimiter(clock, 1_000);
    failTimes(limiter, "203.0.113.1", 20);
    for (let index = 0; index < 5_000; index += 1) {
      limiter.recordFailure("webhook", `10.0.${index >> 8}.${index & 0xff}`, LIMIT);
      // The blocked address keeps trying, and is refused each time.
      if (index % 500 === 0) expect(limiter.check("webhook", "203.0.113.1", LIMIT)).toBeDefined();
    }
    expect(limiter.check("webhook", "203.0.113.1", LIMIT)).toBeDefined();
    expect(limiter.size).toBe(1_000);
  });

  it("answers a check without a lookup while nothing has failed", () => {
    const limiter = createMemoryAuthFailureLimiter(manualClock());
    expect(limiter.check("webhook", "203.0.113.1", LIMIT)).toBeUndefined();
    expect(limiter.size).toBe(0);
  });
});
