import { ChannelError } from "../../channel-error.js";
import { type Clock, systemClock } from "../../clock.js";
import { type Logger, silentLogger } from "../../log/logger.js";
import type { Metrics } from "../../metrics/metrics.js";
import { noopMetrics } from "../../metrics/noop-metrics.js";
import type { OperatorEvents } from "../../operator-events/operator-events.js";
import { BrainPause, isPausingError } from "./brain-pause.js";
import { createFairQueue } from "./fair-queue.js";
import { pollVerdict } from "./polled-waiter.js";

export { backoffPauseMs, FIRST_PAUSE_MS, isPausingError, MAX_BACKOFF_PAUSE_MS, MAX_PAUSE_MS } from "./brain-pause.js";

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
   * timer of its own that looks every this many ms (see `polled-waiter.ts`). Default: settled at once.
   */
  readonly waiterPollMs?: number | undefined;
  /** This runtime's share of a `max_concurrency` the whole service holds (see `BrainSharing`); default all of it. */
  readonly share?: ((max: number) => number) | undefined;
  /** Told of each pause that began here (not of one learned from elsewhere), to tell the others. */
  readonly onPause?: ((until: number, status: number) => void) | undefined;
  /** Where the brain's pauses met here, and their ends, are raised as operator events; default nowhere. */
  readonly events?: OperatorEvents | undefined;
}

/** The limits a call is run with: its brain's, so that a reload's new values apply to new calls. */
export interface CallLimits {
  /** Calls of the brain in flight at most, this one included (this runtime's share of it applies). */
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
  /**
   * A pause another runtime met (another replica's 429): this brain pauses until `until` too.
   * With `since`, one met and told by a runtime this one replaces: its end is told here.
   */
  pauseUntil(until: number, status: number, since?: number): void;
  /** The share moved (a replica came or went): waiting calls are looked at again. */
  reshared(): void;
  /**
   * The brain's limits as configured now (at a start or a reload): its `maxConcurrency` then
   * admits every call, those already waiting included, and a raised one admits more at once.
   * Until it is set, each call is admitted under the limits it was run with.
   */
  configure(limits: CallLimits): void;
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

interface Lease {
  readonly expiresAt: number;
}

/**
 * Builds the limiter of brain `name` (see {@link BrainLimiter}): at most this runtime's share of
 * `maxConcurrency` calls in flight, the waiting ones admitted in turn per conversation, and the
 * brain's {@link BrainPause} after a 429 or 503, during which the server sees only the calls
 * that were in flight when it began; then calls go through again.
 */
export function createBrainLimiter(name: string, options: BrainLimiterOptions = {}): BrainLimiter {
  const clock = options.clock ?? systemClock;
  const logger = options.logger ?? silentLogger;
  const metrics = options.metrics ?? noopMetrics;
  const schedule = options.schedule ?? unrefTimeout;
  const share = options.share ?? ((max: number) => max);
  const queue = createFairQueue<Waiter>();
  const leases = new Set<Lease>();
  let leaseTimer = false;
  const pause = new BrainPause({
    name,
    clock,
    logger,
    metrics,
    schedule,
    onPause: options.onPause,
    events: options.events,
  });

  let configured: CallLimits | undefined;
  const reportInFlight = (): void => metrics.brainInFlight(name, leases.size);
  // A call waiting since before a reload meets the reload's limit, not the one it came with.
  const capacity = (limits: CallLimits): number => share((configured ?? limits).maxConcurrency);
  const paused = (now: number): boolean => pause.active(now);
  const refusal = (now: number): ChannelError => pause.refusal(now);

  const goneError = (): ChannelError =>
    new ChannelError("brain_failed", `brain "${name}": the call stopped waiting for a slot; not asked`, {
      status: 503,
      retryable: true,
      brain: name,
    });

  /**
   * The calls waiting for a slot would only meet the same answer once a pause began: they fail
   * now, so that a fallback is asked at once and the job's retry waits for the pause to end.
   */
  const refuseWaiting = (): number => {
    const refused = queue.drain();
    const error = refusal(clock.now());
    for (const waiter of refused) waiter.refuse(error);
    return refused.length;
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
      if (leases.size >= capacity(head.limits)) reclaim(now);
      if (leases.size >= capacity(head.limits)) break;
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
    if (paused(now)) return Promise.reject(refusal(now));
    if (queue.size === 0) {
      if (leases.size >= capacity(limits)) reclaim(now);
      if (leases.size < capacity(limits)) return Promise.resolve(take(limits, now));
    }
    return new Promise((admit, refuse) => {
      const every = options.waiterPollMs;
      if (every === undefined) queue.push(key, { limits, admit, refuse });
      else {
        const polled = pollVerdict<Lease>({ every, clock, schedule, admitWaiting, admit, refuse });
        queue.push(key, {
          limits,
          admit: (lease) => polled.note({ lease }),
          refuse: (error) => polled.note({ error }),
          alive: polled.alive,
        });
      }
      armLeaseTimer();
    });
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
        throw refusal(now);
      }
      try {
        const result = await call();
        pause.succeeded();
        return result;
      } catch (error) {
        // The pause starts before this call gives its slot back, so no waiting call slips through.
        if (isPausingError(error)) pause.met(error, leases.size, refuseWaiting);
        throw error;
      } finally {
        release(lease);
      }
    },
    inFlight: () => leases.size,
    waiting: () => queue.size,
    pausedUntil: () => pause.end(clock.now()),
    pauseUntil: (until, status, since) =>
      void (since === undefined
        ? pause.learned(until, status, leases.size, refuseWaiting)
        : pause.takenOver(until, status, since, leases.size, refuseWaiting)),
    reshared: admitWaiting,
    configure(limits) {
      configured = limits;
      admitWaiting();
    },
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
