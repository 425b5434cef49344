/** What {@link within} answers when the promise is still pending after the wait. */
export const PENDING: unique symbol = Symbol("pending");

/** Resolves after `ms`. */
export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/**
 * What `promise` resolves with, if it does within `ms`, else {@link PENDING}: the caller stops
 * waiting, and the promise goes on.
 */
export function within<T>(promise: Promise<T>, ms: number): Promise<T | typeof PENDING> {
  const pending: Promise<typeof PENDING> = sleep(ms).then(() => PENDING);
  // A timer of an object that stops rejects: the race may be over by then, and nobody waits.
  pending.catch(() => undefined);
  return Promise.race([promise, pending]);
}
