/**
 * How a runtime's brain limits stand to the service's, where several runtimes call the same
 * brains (replicas on Postgres): the share of each `max_concurrency` that this one may use, and
 * the pauses it tells the others of. The limits themselves (slots, pauses) are the limiter's.
 */
export interface BrainSharing {
  /**
   * This runtime's share of a limit that the whole service holds: the `max_concurrency` of the
   * limiter `limiter` (a key of {@link SharedLimiters.inFlight}).
   */
  share(max: number, limiter: string): number;
  /** The brain calling `target` was paused here until `until` (epoch ms) after `status`: tell the others. */
  paused(target: string, until: number, status: number): void;
  /** Called by the limiters it serves, so that what it learns (pauses elsewhere, new shares) reaches them. */
  attach?(limiters: SharedLimiters): void;
  /**
   * Registers `cut`, called when this runtime's shares are gone at once (a replica whose lease
   * ran out): the others took them over, so its calls in flight count against no share any more
   * and the runtime ends them rather than call a brain past its limit beside the others.
   */
  onSharesLost?(cut: () => void): void;
}

/** What a {@link BrainSharing} tells the limiters of a runtime. */
export interface SharedLimiters {
  /** Another runtime met a pause on the server `target` until `until`. */
  pauseTarget(target: string, until: number, status: number): void;
  /** The shares moved: waiting calls are looked at again. */
  reshared(): void;
  /**
   * The calls in flight now, per limiter: what the other runtimes wait for before they use a
   * share that grew (a call begun under an older share still holds its slot). Limiters with
   * none are left out.
   */
  inFlight(): ReadonlyMap<string, number>;
}

/** A runtime that calls its brains alone: every limit is its own, and nobody is told of a pause. */
export const SOLE_BRAIN_SHARING: BrainSharing = {
  share: (max) => max,
  paused: () => undefined,
};
