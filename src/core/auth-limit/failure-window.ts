import type { AuthFailureBlock, AuthFailureLimit } from "./auth-failure-limiter.js";

/**
 * The failed authentications of one address: their times, oldest first, at most `max` of them
 * (older ones no longer decide anything), and when its refusal was last logged. Plain data, so
 * that a Durable Object can store it as it is.
 */
export interface FailureWindow {
  times: number[];
  warnedAt: number | null;
}

/** A window with no failures. */
export function emptyWindow(): FailureWindow {
  return { times: [], warnedAt: null };
}

/**
 * The refusal that applies at `now`, or undefined. `max` failures within the window refuse the
 * address until the oldest of them leaves it: a sliding window, so a client that stops
 * guessing is let through again exactly `windowMs` after its first counted failure, and one
 * that keeps guessing gets one more try each time a failure ages out. The first refusal in a
 * window is marked `first` (and remembered), so that it alone is logged.
 */
export function blockOf(window: FailureWindow, now: number, limit: AuthFailureLimit): AuthFailureBlock | undefined {
  dropExpired(window, now, limit);
  const oldest = window.times[window.times.length - limit.max];
  if (oldest === undefined) return undefined;
  const first = window.warnedAt === null || now >= window.warnedAt + limit.windowMs;
  if (first) window.warnedAt = now;
  return { retryAfterSeconds: Math.max(1, Math.ceil((oldest + limit.windowMs - now) / 1000)), first };
}

/** Counts a failure at `now`. */
export function addFailure(window: FailureWindow, now: number, limit: AuthFailureLimit): void {
  const { times } = window;
  const from = Math.max(firstLive(times, now, limit), times.length + 1 - limit.max);
  // A new array of exactly the times kept: a pushed-to array would reserve room for more.
  window.times = times.slice(from).concat(now);
}

/** True when the window holds nothing that still counts, so it can be forgotten. */
export function isIdle(window: FailureWindow, now: number, limit: AuthFailureLimit): boolean {
  dropExpired(window, now, limit);
  return window.times.length === 0 && (window.warnedAt === null || now >= window.warnedAt + limit.windowMs);
}

function dropExpired(window: FailureWindow, now: number, limit: AuthFailureLimit): void {
  const from = firstLive(window.times, now, limit);
  if (from > 0) window.times = window.times.slice(from);
}

/** The index of the first time still inside the window at `now`. */
function firstLive(times: readonly number[], now: number, { windowMs }: AuthFailureLimit): number {
  let index = 0;
  while (index < times.length && (times[index] ?? 0) + windowMs <= now) index += 1;
  return index;
}
