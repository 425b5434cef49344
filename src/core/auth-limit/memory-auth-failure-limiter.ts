import type { Clock } from "../clock.js";
import { LruMap } from "../lru-map.js";
import {
  type AuthFailureBlock,
  type AuthFailureLimit,
  type AuthFailureLimiter,
  limitKey,
} from "./auth-failure-limiter.js";
import { addFailure, blockOf, emptyWindow, type FailureWindow, isIdle } from "./failure-window.js";

/** Addresses a memory limiter keeps at most. */
export const DEFAULT_AUTH_FAILURE_ADDRESSES = 100_000;

/**
 * Failure times a memory limiter keeps at most, over all addresses: with `max` above 20 it
 * keeps fewer addresses (2,000,000 / max), so that its memory stays under about 40 MB (the
 * measure at the default limit, 100,000 addresses of 20 failures each) whatever the limit.
 */
export const AUTH_FAILURE_TIMES_BUDGET = 2_000_000;

/** The in-process limiter: always synchronous, and with how many addresses it holds (for tests of its bound). */
export interface MemoryAuthFailureLimiter extends AuthFailureLimiter {
  readonly size: number;
  check(channel: string, address: string, limit: AuthFailureLimit): AuthFailureBlock | undefined;
  recordFailure(channel: string, address: string, limit: AuthFailureLimit): undefined;
}

/**
 * An in-process {@link AuthFailureLimiter}: a window of failure times per channel and address,
 * at most `capacity` of them. Past it the least recently failing (or refused) address is
 * forgotten, so a million distinct addresses cost no more than `capacity`, and an address
 * that keeps guessing stays among the newest and is not pushed out by the others. Addresses
 * that never failed cost nothing: while nothing has failed a check is one size test, and
 * otherwise one map lookup.
 */
export function createMemoryAuthFailureLimiter(
  clock: Clock,
  capacity: number = DEFAULT_AUTH_FAILURE_ADDRESSES,
): MemoryAuthFailureLimiter {
  const windows = new LruMap<FailureWindow>();
  return {
    get size() {
      return windows.size;
    },
    check(channel, address, limit) {
      if (windows.size === 0) return undefined;
      const key = limitKey(channel, address);
      const window = windows.get(key);
      if (window === undefined) return undefined;
      const now = clock.now();
      const block = blockOf(window, now, limit);
      if (block === undefined) {
        if (isIdle(window, now, limit)) windows.delete(key);
        return undefined;
      }
      windows.set(key, window);
      return block;
    },
    recordFailure(channel, address, limit) {
      const key = limitKey(channel, address);
      const window = windows.get(key) ?? emptyWindow();
      addFailure(window, clock.now(), limit);
      windows.set(key, window);
      windows.trimTo(Math.min(capacity, Math.floor(AUTH_FAILURE_TIMES_BUDGET / limit.max)));
      return undefined;
    },
  };
}
