import type { AuthFailureLimiter } from "./auth-failure-limiter.js";

/** A limiter that never refuses: for apps built without one (tests, tools). */
export const noopAuthFailureLimiter: AuthFailureLimiter = {
  check: () => undefined,
  recordFailure: () => undefined,
};
