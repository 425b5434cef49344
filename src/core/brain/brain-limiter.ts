// The limiter is one file: the slots, the waiting calls and the pause decide together who may
// call (a pause refuses the waiting calls, a freed slot admits one, a lost slot is taken back),
// and split up they would have to share all of their state.
import { ChannelError, isChannelError } from "../channel-error.js";
import { type Clock, systemClock } from "../clock.js";
import { DEFAULT_RETRY_POLICY } from "../lifecycle/retry-policy.js";
import { type Logger, silentLogger } from "../log/logger.js";
import type { Metrics } from "../metrics/metrics.js";
import { noopMetrics } from "../metrics/noop-metrics.js";
import { createFairQueue } from "./fair-queue.js";

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

/** Runs `callback` once after `ms`; the limiter's only kind of timer, injectable for tests. */
export type Schedule = (callback: () => void, ms: number) => void;

/** What a limiter is built with; every part has a default. */
export interface BrainLimiterOptions {
  /** Decides when a pause ends and when a slot's lease runs out; default the system clock. */
  readonly clock?: Clock | undefined;
  /** A `warn` line when the brain is paused, `info` when it resumes; default none. */
  readonly logger?: Logger | undefined;
  /** Where the in-flight count and the pause (with its end) go; default nowhere. */
  readonly metrics?: Pick<Metrics, "brainInFlight" | "brainPaused"> | undefined;
  /** The timers (end of a pause, end of a lease); default `setTimeout`, not holding a Node process open. */
  readonly schedule?: Schedule | undefined;
  /** False: the limiter does not report its zero in-flight count and `paused false` when built. Default true. */
  readonly reportAtStart?: boolean | undefined;
  /**
   * When set, a waiting call finds out that it was given a slot, or refused by a pause, on a
   * timer of its own that looks every this many ms, instead of being settled by the call that
   * freed the slot or began the pause. Workers needs it: one limiter serves every Durable
   * Object of an isolate, and workerd refuses to settle a promise of one object from another
   * ("Cannot perform I/O on behalf of a different Durable Object"). Default: settled at once.
   */
  readonly waiterPollMs?: number | undefined;
}

/** The limits a call is run with: its brain's, so that a reload's new values apply to new calls. */
export interface CallLimits {
  /** Calls of the brain in flight at most, this one included. */
  readonly maxConcurrency: number;
  /**
   * Longest the call may hold its slot: its brain's time limit and a margin. A call that has
   * not ended by then is taken to be lost (on Workers, a promise of a request that was
   * cancelled may never settle) and its slot is taken back, so a lost call cannot shrink the
   * brain's capacity for good.
   */
  readonly leaseMs: number;
}

/**
 * The limits of one brain, shared by every conversation: at most `maxConcurrency` calls in
 * flight, the others waiting their turn per conversation, and a pause for everyone after the
 * brain answered 429 or 503.
 */
export interface BrainLimiter {
  /** The brain's name, for errors, log lines and metrics. */
  readonly name: string;
  /**
   * Runs `call` once a slot is free. `key` is the conversation: waiting calls are admitted in
   * turn per key. A waiting call has no time limit of its own (the brain's slowness holds the
   * job, as it should), but while the brain is paused, or when a pause starts while it waits,
   * it fails at once without calling: a retryable `brain_failed` ChannelError whose
   * `retryAfterMs` is the time left in the pause.
   */
  run<T>(key: string, limits: CallLimits, call: () => Promise<T>): Promise<T>;
  /** Calls in flight now. */
  inFlight(): number;
  /** Calls waiting for a slot now. */
  waiting(): number;
  /** Epoch ms when the current pause ends; undefined when the brain is not paused. */
  pausedUntil(): number | undefined;
}

interface Waiter {
  readonly limits: CallLimits;
  readonly admit: (lease: Lease) => void;
  readonly refuse: (error: ChannelError) => void;
  /**
   * False when the waiter stopped looking for its verdict (a polled waiter whose Durable
   * Object is gone): it is refused instead of given a slot nobody would use. Absent: alive.
   */
  readonly alive?: (now: number) => boolean;
}

/**
 * A polled waiter that has not looked for this long is taken for gone. Generous: a live one
 * wrongly taken for gone is only refused with a retryable error, and its job retries.
 */
const GONE_AFTER_MS = 10_000;

interface Lease {
  readonly expiresAt: number;
}

/** Whether a brain's failure pauses it: a 429 or 503 from its server. */
export function isPausingError(error: unknown): error is ChannelError {
  return isChannelError(error) && error.upstreamStatus !== undefined && PAUSING_STATUSES.has(error.upstreamStatus);
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
 * Builds the limiter of brain `name` (see {@link BrainLimiter}).
 *
 * A call that fails with a 429 or 503 pauses the brain until the error's `retryAfterMs`, else
 * for {@link backoffPauseMs} of the pauses in a row (a success outside a pause resets the
 * count), at most {@link MAX_PAUSE_MS}. The pause starts before the failed call gives its slot
 * back, so no waiting call slips through: during a pause the server sees only the calls that
 * were in flight when it began. Those finish; a later 429 among them can only lengthen the
 * pause to its own `Retry-After` (the metrics hear the new end). The pause ends by the clock:
 * calls go through again, at most `maxConcurrency` at once, and a timer reports the end (metric
 * and log line) even when no call comes.
 */
export function createBrainLimiter(name: string, options: BrainLimiterOptions = {}): BrainLimiter {
  const clock = options.clock ?? systemClock;
  const logger = options.logger ?? silentLogger;
  const metrics = options.metrics ?? noopMetrics;
  const schedule = options.schedule ?? unrefTimeout;
  const queue = createFairQueue<Waiter>();
  const leases = new Set<Lease>();
  let pausedUntil: number | undefined;
  let pausedAt = 0;
  let pauseStatus = 0;
  let pauses = 0;
  let pauseTimer = false;
  let leaseTimer = false;

  const reportInFlight = (): void => metrics.brainInFlight(name, leases.size);

  /** Ends a pause whose time has come; true while the brain is still paused. */
  const paused = (now: number): boolean => {
    if (pausedUntil === undefined) return false;
    if (now < pausedUntil) return true;
    pausedUntil = undefined;
    metrics.brainPaused(name, false);
    logger.info(`brain "${name}" resumed`, { brain: name, paused_ms: now - pausedAt, in_flight: leases.size });
    return false;
  };

  const goneError = (): ChannelError =>
    new ChannelError("brain_failed", `brain "${name}": the call stopped waiting for a slot; not asked`, {
      status: 503,
      retryable: true,
      brain: name,
    });

  const pausedError = (now: number): ChannelError => {
    const left = Math.max(1, (pausedUntil ?? now) - now);
    return new ChannelError(
      "brain_failed",
      `brain "${name}" is paused for ${Math.ceil(left / 1000)} s more, after its server answered ${pauseStatus}; not asked`,
      { status: 503, retryable: true, retryAfterMs: left, brain: name },
    );
  };

  const armPauseTimer = (): void => {
    if (pauseTimer || pausedUntil === undefined) return;
    pauseTimer = true;
    schedule(
      () => {
        pauseTimer = false;
        // The clock decides, not the timer: a timer may fire early, or a test's clock stand still.
        if (paused(clock.now())) armPauseTimer();
      },
      Math.max(0, pausedUntil - clock.now()),
    );
  };

  const pause = (error: ChannelError): void => {
    const now = clock.now();
    // "Retry-After: 0" after a 429 is no help; the backoff stands in for it.
    const asked = error.retryAfterMs !== undefined && error.retryAfterMs > 0 ? error.retryAfterMs : undefined;
    if (paused(now) && pausedUntil !== undefined) {
      // A call that was in flight when the pause began: only its own Retry-After may lengthen it.
      const until = asked === undefined ? pausedUntil : now + Math.min(asked, MAX_PAUSE_MS);
      if (until > pausedUntil) {
        pausedUntil = until;
        // Reported again so that whoever shows the end (the console) does not show the old one.
        metrics.brainPaused(name, true, pausedUntil);
      }
      return;
    }
    pauses += 1;
    const pauseMs = Math.min(asked ?? backoffPauseMs(pauses), MAX_PAUSE_MS);
    pausedAt = now;
    pausedUntil = now + pauseMs;
    pauseStatus = error.upstreamStatus ?? 0;
    const refused = queue.drain();
    metrics.brainPaused(name, true, pausedUntil);
    logger.warn(`brain "${name}" paused for ${pauseMs} ms: its server answered ${pauseStatus}`, {
      brain: name,
      upstream_status: pauseStatus,
      pause_ms: pauseMs,
      resume_at: new Date(pausedUntil).toISOString(),
      retry_after: asked !== undefined,
      in_flight: leases.size,
      refused: refused.length,
    });
    armPauseTimer();
    // The calls waiting for a slot would only meet the same answer: they fail now, so that a
    // fallback is asked at once and the job's retry waits for the pause to end.
    const refusal = pausedError(now);
    for (const waiter of refused) waiter.refuse(refusal);
  };

  const take = (limits: CallLimits, now: number): Lease => {
    const lease = { expiresAt: now + limits.leaseMs };
    leases.add(lease);
    reportInFlight();
    return lease;
  };

  /** Takes back the slots of calls that outlived their lease; they are lost, not slow. */
  const reclaim = (now: number): void => {
    let lost = 0;
    for (const lease of leases) {
      if (lease.expiresAt > now) continue;
      leases.delete(lease);
      lost += 1;
    }
    if (lost === 0) return;
    reportInFlight();
    logger.warn(`brain "${name}": ${lost} call(s) held a slot past their time limit; the slots are taken back`, {
      brain: name,
      lost,
      in_flight: leases.size,
    });
  };

  /** Hands free slots to waiting calls, in turn per conversation. */
  const admitWaiting = (): void => {
    const now = clock.now();
    if (paused(now)) return;
    for (let head = queue.peek(); head !== undefined; head = queue.peek()) {
      if (head.alive?.(now) === false) {
        queue.shift();
        head.refuse(goneError());
        continue;
      }
      if (leases.size >= head.limits.maxConcurrency) reclaim(now);
      if (leases.size >= head.limits.maxConcurrency) break;
      queue.shift();
      // The slot is taken here, before the waiter runs, so a call arriving meanwhile cannot take it.
      head.admit(take(head.limits, now));
    }
    armLeaseTimer();
  };

  /** While calls wait, wakes up when the oldest lease runs out, in case no call ends before. */
  const armLeaseTimer = (): void => {
    if (leaseTimer || queue.size === 0 || leases.size === 0) return;
    let first = Number.POSITIVE_INFINITY;
    for (const lease of leases) first = Math.min(first, lease.expiresAt);
    leaseTimer = true;
    schedule(
      () => {
        leaseTimer = false;
        admitWaiting();
      },
      Math.max(0, first - clock.now()),
    );
  };

  const acquire = (key: string, limits: CallLimits): Promise<Lease> => {
    const now = clock.now();
    if (paused(now)) return Promise.reject(pausedError(now));
    if (queue.size === 0) {
      if (leases.size >= limits.maxConcurrency) reclaim(now);
      if (leases.size < limits.maxConcurrency) return Promise.resolve(take(limits, now));
    }
    return new Promise((admit, refuse) => {
      queue.push(key, options.waiterPollMs === undefined ? { limits, admit, refuse } : polled(limits, admit, refuse));
      armLeaseTimer();
    });
  };

  /**
   * A waiter whose verdict is only noted, then read by its own timer (see `waiterPollMs`):
   * the timer runs where the waiting call was made, so that is where its promise settles.
   */
  const polled = (limits: CallLimits, admit: (lease: Lease) => void, refuse: (error: ChannelError) => void): Waiter => {
    const every = options.waiterPollMs ?? 0;
    let verdict: { readonly lease: Lease } | { readonly error: ChannelError } | undefined;
    let lookedAt = clock.now();
    const look = (): void => {
      lookedAt = clock.now();
      // Each look also hands out what is free, from a context that is alive: the lease timer
      // may have been set by an object that is gone since, and then never fires.
      if (verdict === undefined) admitWaiting();
      if (verdict === undefined) schedule(look, every);
      else if ("lease" in verdict) admit(verdict.lease);
      else refuse(verdict.error);
    };
    schedule(look, every);
    return {
      limits,
      admit: (lease) => {
        verdict = { lease };
      },
      refuse: (error) => {
        verdict = { error };
      },
      alive: (now) => now - lookedAt < Math.max(GONE_AFTER_MS, every * 10),
    };
  };

  const release = (lease: Lease): void => {
    // A lease already taken back leaves the count as it is.
    if (leases.delete(lease)) reportInFlight();
    admitWaiting();
  };

  if (options.reportAtStart !== false) {
    metrics.brainInFlight(name, 0);
    metrics.brainPaused(name, false);
  }

  return {
    name,
    async run(key, limits, call) {
      const lease = await acquire(key, limits);
      // A pause may have begun between the slot's hand-over and this line: then do not call.
      const now = clock.now();
      if (paused(now)) {
        release(lease);
        throw pausedError(now);
      }
      try {
        const result = await call();
        if (pausedUntil === undefined) pauses = 0;
        return result;
      } catch (error) {
        if (isPausingError(error)) pause(error);
        throw error;
      } finally {
        release(lease);
      }
    },
    inFlight: () => leases.size,
    waiting: () => queue.size,
    pausedUntil: () => (paused(clock.now()) ? pausedUntil : undefined),
  };
}

/**
 * `setTimeout` that does not keep a Node process alive (`unref` where the platform has it):
 * a pause must never delay a shutdown. Feature-tested, so the core stays Web-standard.
 */
const unrefTimeout: Schedule = (callback, ms) => {
  const handle: unknown = setTimeout(callback, ms);
  if (typeof handle === "object" && handle !== null && "unref" in handle && typeof handle.unref === "function") {
    handle.unref();
  }
};
