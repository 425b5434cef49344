import { addressGroup } from "../net/ip-address.js";

/** How many failed authentications one client address may make per channel, and in what time. */
export interface AuthFailureLimit {
  /** Failures within the window after which the address is refused. */
  readonly max: number;
  /** The sliding window, in ms. */
  readonly windowMs: number;
}

/** An address that is refused for now. */
export interface AuthFailureBlock {
  /** Whole seconds until the oldest failure leaves the window and a request is let through again. */
  readonly retryAfterSeconds: number;
  /** True for the first refusal of this address within a window, which is the one that is logged. */
  readonly first: boolean;
}

/**
 * Counts failed authentications per channel and client address, and refuses an address that
 * made `limit.max` of them within `limit.windowMs`, before its secret is even compared, so
 * that guessing is slowed to `max` tries per window. Both methods answer synchronously when
 * they can (the memory limiter always does), which keeps the Node fast path free of promises,
 * or with a promise (a Durable Object). The limit comes with each call, so one limiter serves
 * channels with different limits.
 */
export interface AuthFailureLimiter {
  /** The refusal of `address` on `channel` now, or undefined when a request may be checked. */
  check(
    channel: string,
    address: string,
    limit: AuthFailureLimit,
  ): AuthFailureBlock | undefined | Promise<AuthFailureBlock | undefined>;
  /** Counts one failed authentication of `address` on `channel`. */
  recordFailure(channel: string, address: string, limit: AuthFailureLimit): Promise<void> | undefined;
}

/**
 * The key failures are counted under: the channel and the address's group (an IPv6 address
 * counts by its /64, see {@link addressGroup}).
 */
export function limitKey(channel: string, address: string): string {
  return `${channel}\n${addressGroup(address)}`;
}
