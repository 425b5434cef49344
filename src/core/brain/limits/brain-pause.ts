import { ChannelError, isChannelError } from "../../channel-error.js";
import type { Clock } from "../../clock.js";
import { DEFAULT_RETRY_POLICY } from "../../lifecycle/retry-policy.js";
import type { Logger } from "../../log/logger.js";
import type { Metrics } from "../../metrics/metrics.js";
import { brainPausedEvent, brainResumedEvent } from "../../operator-events/operator-event.js";
import type { OperatorEvents } from "../../operator-events/operator-events.js";

/** Upstream statuses that pause a brain for everyone: it is rate-limited or overloaded. */
const PAUSING_STATUSES: ReadonlySet<number> = new Set([429, 503]);

/** First pause without a `Retry-After`; each further pause in a row doubles it. */
export const FIRST_PAUSE_MS = DEFAULT_RETRY_POLICY.initialDelayMs;
/** Longest pause without a `Retry-After`. */
export const MAX_BACKOFF_PAUSE_MS = 60_000;
/**
 * Longest pause at all, whatever `Retry-After` says: the retry policy's largest delay. A
 * message is not retried later than this anyway, and a broken header must not silence a brain
 * for hours.
 */
export const MAX_PAUSE_MS = DEFAULT_RETRY_POLICY.maxDelayMs;

/** Whether a failure is a brain's that pauses it: a 429 or 503 from its server (a receiver's is not). */
export function isPausingError(error: unknown): error is ChannelError {
  return (
    isChannelError(error) &&
    error.code === "brain_failed" &&
    error.upstreamStatus !== undefined &&
    PAUSING_STATUSES.has(error.upstreamStatus)
  );
}

/**
 * The pause without a `Retry-After` after `pauses` pauses in a row (1 for the first):
 * 1 s, 2 s, 4 s ... up to 60 s. No jitter: one pause stands for every conversation, so there
 * is nothing to spread out.
 */
export function backoffPauseMs(pauses: number): number {
  return Math.min(MAX_BACKOFF_PAUSE_MS, FIRST_PAUSE_MS * 2 ** Math.min(Math.max(0, pauses - 1), 30));
}

/**
 * How long a brain pauses on a pausing `error`, the `pauses`-th in a row (1 for the first): its
 * `Retry-After` (a zero one is no help), else the backoff, never past {@link MAX_PAUSE_MS}. The
 * limiter pauses for it, and a message waits for it: one rule for both.
 */
export function pauseMsFor(error: ChannelError, pauses: number): number {
  const asked = error.retryAfterMs !== undefined && error.retryAfterMs > 0 ? error.retryAfterMs : undefined;
  return Math.min(asked ?? backoffPauseMs(pauses), MAX_PAUSE_MS);
}

/** The refusal of a call made while brain `name` is paused until `until`: retryable, with the time left. */
export function pausedError(name: string, until: number, status: number, now: number): ChannelError {
  const left = Math.max(1, until - now);
  return new ChannelError(
    "brain_failed",
    `brain "${name}" is paused for ${Math.ceil(left / 1000)} s more, after its server answered ${status}; not asked`,
    { status: 503, retryable: true, retryAfterMs: left, brain: name, pausedUntil: until },
  );
}

/** What a brain's pause reports through, and when it ends. */
export interface BrainPauseDeps {
  readonly name: string;
  readonly clock: Clock;
  readonly logger: Logger;
  readonly metrics: Pick<Metrics, "brainPaused">;
  readonly schedule: (callback: () => void, ms: number) => void;
  /** Told of each pause that began or lengthened here (not of one learned from elsewhere). */
  readonly onPause?: ((until: number, status: number) => void) | undefined;
  /**
   * Where `brain.paused` and `brain.resumed` are raised: for a pause met here only, so that a
   * pause replicas learn of from each other is told once, by the one whose call met it.
   */
  readonly events?: OperatorEvents | undefined;
}

/**
 * The pause of one brain after its server answered 429 or 503: until the error's `retryAfterMs`,
 * else for {@link backoffPauseMs} of the pauses in a row (a success outside a pause resets the
 * count), at most {@link MAX_PAUSE_MS}. While it lasts, a call that was in flight when it began
 * can only lengthen it to its own `Retry-After`. It ends by the clock, and a timer reports the
 * end (metric and log line) even when no call comes. A pause met by another runtime (a replica)
 * is taken over as it is.
 */
export class BrainPause {
  private until: number | undefined;
  private since = 0;
  private status = 0;
  private inARow = 0;
  private timer = false;
  /** The pause under way began here (not learned from elsewhere). */
  private metHere = false;

  constructor(private readonly deps: BrainPauseDeps) {}

  /** True while paused; ends (and reports the end of) a pause whose time has come. */
  active(now: number): boolean {
    if (this.until === undefined) return false;
    if (now < this.until) return true;
    this.until = undefined;
    this.deps.metrics.brainPaused(this.deps.name, false);
    this.deps.logger.info(`brain "${this.deps.name}" resumed`, { brain: this.deps.name, paused_ms: now - this.since });
    if (this.metHere) this.deps.events?.emit(brainResumedEvent(this.deps.name, now - this.since));
    return false;
  }

  /** Epoch ms when the pause ends, while it lasts. */
  end(now: number): number | undefined {
    return this.active(now) ? this.until : undefined;
  }

  /** The refusal of a call made during the pause. */
  refusal(now: number): ChannelError {
    return pausedError(this.deps.name, this.until ?? now, this.status, now);
  }

  /** A call succeeded: outside a pause, the next one starts the backoff afresh. */
  succeeded(): void {
    if (this.until === undefined) this.inARow = 0;
  }

  /**
   * A call failed with a pausing error. Returns true when a pause began now: `refuse` then
   * fails the calls waiting for a slot (it returns how many, for the log line).
   */
  met(error: ChannelError, inFlight: number, refuse: () => number): boolean {
    const asked = error.retryAfterMs !== undefined && error.retryAfterMs > 0;
    const now = this.deps.clock.now();
    const pauseMs = pauseMsFor(error, this.inARow + 1);
    return this.begin(now, now + pauseMs, error.upstreamStatus ?? 0, asked, false, inFlight, refuse);
  }

  /** Another runtime met a pause until `until`: this brain pauses until then too. */
  learned(until: number, status: number, inFlight: number, refuse: () => number): boolean {
    const now = this.deps.clock.now();
    return this.begin(now, Math.min(until, now + MAX_PAUSE_MS), status, true, true, inFlight, refuse);
  }

  /**
   * A pause this brain met and told (since `since`) in a runtime that died with it (a delivery
   * thread): it holds here without being told again, and its end is told here, as it would have been there.
   */
  takenOver(until: number, status: number, since: number, inFlight: number, refuse: () => number): boolean {
    if (!this.learned(until, status, inFlight, refuse)) return false;
    this.metHere = true;
    this.since = since;
    return true;
  }

  // `now` is the caller's: a second read of the clock would take a millisecond off the pause
  // the log line and the metric report.
  private begin(
    now: number,
    until: number,
    status: number,
    asked: boolean,
    learned: boolean,
    inFlight: number,
    refuse: () => number,
  ): boolean {
    const { name, metrics, logger } = this.deps;
    if (this.active(now) && this.until !== undefined) {
      // A call that was in flight when the pause began: only its own Retry-After may lengthen it.
      if (asked && until > this.until) {
        this.until = until;
        // Reported again so that whoever shows the end (the console) does not show the old one.
        metrics.brainPaused(name, true, until);
        if (!learned) this.deps.onPause?.(until, status);
      }
      return false;
    }
    if (until <= now) return false;
    if (!learned) this.inARow += 1;
    this.metHere = !learned;
    this.since = now;
    this.until = until;
    this.status = status;
    metrics.brainPaused(name, true, until);
    const refused = refuse();
    logger.warn(`brain "${name}" paused for ${until - now} ms: its server answered ${status}`, {
      brain: name,
      upstream_status: status,
      pause_ms: until - now,
      resume_at: new Date(until).toISOString(),
      retry_after: asked,
      in_flight: inFlight,
      refused,
      ...(learned ? { elsewhere: true } : {}),
    });
    this.arm();
    if (!learned) {
      this.deps.onPause?.(until, status);
      this.deps.events?.emit(brainPausedEvent(name, until, status));
    }
    return true;
  }

  private arm(): void {
    if (this.timer || this.until === undefined) return;
    this.timer = true;
    this.deps.schedule(
      () => {
        this.timer = false;
        // The clock decides, not the timer: a timer may fire early, or a test's clock stand still.
        if (this.active(this.deps.clock.now())) this.arm();
      },
      Math.max(0, this.until - this.deps.clock.now()),
    );
  }
}
