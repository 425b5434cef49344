import { type AuthFailureLimiter, limitKey } from "../../core/auth-limit/auth-failure-limiter.js";
import type { Clock } from "../../core/clock.js";
import type { AuthFailureObject } from "./auth-failure-object.js";

/**
 * The core's AuthFailureLimiter on Durable Objects: one {@link AuthFailureObject} per channel
 * and client address, so that failures count across isolates and locations. Every inbound
 * request asks its address's object once; a failed authentication is counted before its 401.
 */
export function createDurableAuthFailureLimiter(
  namespace: DurableObjectNamespace<AuthFailureObject>,
  clock: Clock,
): AuthFailureLimiter {
  const stub = (channel: string, address: string) => namespace.get(namespace.idFromName(limitKey(channel, address)));
  return {
    async check(channel, address, limit) {
      return (await stub(channel, address).check(clock.now(), limit)) ?? undefined;
    },
    async recordFailure(channel, address, limit) {
      await stub(channel, address).recordFailure(clock.now(), limit);
    },
  };
}
