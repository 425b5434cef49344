import type { TimelinePrune } from "./timeline-store.js";

/**
 * Where a prune of an SQL timeline cuts, in the list's order (acceptance time, then id): every
 * row before it goes. With an `id`, rows before (acceptedAt, id); without one, rows accepted
 * before `acceptedAt`. One bound for the window and the size bound together, so that a prune
 * deletes one range of the acceptance index from its start, batch after batch.
 */
export interface TimelinePruneBound {
  readonly acceptedAt: number;
  readonly id: string | null;
  /**
   * Without an `id`, rows written at or after this time stay all the same: a message accepted
   * before the window but active since (a dead letter replayed after the window passed it) is
   * still under way, and its timeline goes only once it has been quiet for the window too. Past
   * every time when the size bound cuts, or when nothing is kept.
   */
  readonly activeSince: number;
}

/**
 * The bound of `limits`, given the oldest row the size bound keeps (the `keep`-th most recently
 * accepted; undefined when there are no more rows than that): the later of the window's start
 * and that row, so that exactly `keep` rows stay when the size bound is what cuts.
 */
export function timelinePruneBound(
  limits: TimelinePrune,
  oldestKept: { readonly acceptedAt: number; readonly id: string } | undefined,
): TimelinePruneBound {
  // Nothing kept: every row goes, whenever it was accepted or written.
  if (limits.keep <= 0) return { acceptedAt: Number.MAX_SAFE_INTEGER, id: null, activeSince: Number.MAX_SAFE_INTEGER };
  if (oldestKept === undefined || limits.before > oldestKept.acceptedAt) {
    return { acceptedAt: limits.before, id: null, activeSince: limits.before };
  }
  return { ...oldestKept, activeSince: Number.MAX_SAFE_INTEGER };
}
