import type { ChannelError } from "../../channel-error.js";
import type { Clock } from "../../clock.js";

/** A slot a waiting call was given, or the refusal it met. */
export type WaiterVerdict<Lease> = { readonly lease: Lease } | { readonly error: ChannelError };

/**
 * A polled waiter that has not looked for this long is taken for gone. Generous: a live one
 * wrongly taken for gone is only refused with a retryable error, and its job retries.
 */
const GONE_AFTER_MS = 10_000;

/**
 * A waiting call whose verdict is only noted, then read by its own timer (`waiterPollMs`): the
 * timer runs where the waiting call was made, so that is where its promise settles. Workers needs
 * it: one limiter serves every Durable Object of an isolate, and workerd refuses to settle a
 * promise of one object from another. Each look also hands out what is free (`admitWaiting`), from
 * a context that is alive: a lease timer may have been set by an object that is gone since.
 */
export function pollVerdict<Lease>(options: {
  readonly every: number;
  readonly clock: Clock;
  readonly schedule: (callback: () => void, ms: number) => void;
  readonly admitWaiting: () => void;
  readonly admit: (lease: Lease) => void;
  readonly refuse: (error: ChannelError) => void;
}): { note(verdict: WaiterVerdict<Lease>): void; alive(now: number): boolean } {
  const { every, clock, schedule } = options;
  let verdict: WaiterVerdict<Lease> | undefined;
  let lookedAt = clock.now();
  const look = (): void => {
    lookedAt = clock.now();
    if (verdict === undefined) options.admitWaiting();
    if (verdict === undefined) schedule(look, every);
    else if ("lease" in verdict) options.admit(verdict.lease);
    else options.refuse(verdict.error);
  };
  schedule(look, every);
  return {
    note(given) {
      verdict = given;
    },
    alive: (now) => now - lookedAt < Math.max(GONE_AFTER_MS, every * 10),
  };
}
