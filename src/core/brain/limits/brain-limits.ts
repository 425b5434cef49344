import { MAX_BRAIN_TIMEOUT_MS } from "../../config/brain-schema.js";
import type { BrainConfig } from "../../config/config-schema.js";
import { conversationKey } from "../../conversation/conversation-store.js";
import { noopMetrics } from "../../metrics/noop-metrics.js";
import type { Brain } from "../brain.js";
import { createBrainGauges } from "./brain-gauges.js";
import { type BrainLimiter, type BrainLimiterOptions, type CallLimits, createBrainLimiter } from "./brain-limiter.js";
import { type BrainSharing, SOLE_BRAIN_SHARING } from "./brain-sharing.js";

/**
 * The limiters of the brains, kept across builds of the brains: a reload that leaves a brain's
 * server as it was (its type, URL and model) keeps its limiter, so the calls in flight still
 * count against the cap and a pause still holds. Pass the same instance to every
 * `createBrains` of one consumer.
 */
export interface BrainLimiters {
  /**
   * A pause another runtime met on the server `target` (another replica's 429): every limiter of
   * that server pauses too, without telling the others again.
   */
  pauseTarget(target: string, until: number, status: number): void;
  /**
   * A pause brain `name` met before this set of limiters existed (a delivery thread that died
   * with it): its limiters pause until `until` too, without telling anyone again; with `since`
   * (it was told then), its end is told here.
   */
  pauseBrain(name: string, until: number, status: number, since?: number): void;
  /** The shares moved (a replica came or went): every limiter looks at its waiting calls again. */
  reshared(): void;
  /** The calls in flight per limiter (see {@link SharedLimiters.inFlight}). */
  inFlight(): ReadonlyMap<string, number>;
  /**
   * The limiter of brain `name` calling `target` (see {@link BrainLimits}): the one built
   * before for the same pair, else a new one. A new brain name reports its zero in-flight
   * count and `paused false` at once, so its series exist from the start; a new target of a
   * known name does not, so it cannot reset the gauges while calls to the old target finish.
   */
  limiterFor(name: string, target: string, options: BrainLimiterOptions): BrainLimiter;
  /**
   * Brain `name` calls `target` from now on (a start, or a reload once every brain was built):
   * its pause gauge follows that limiter's (see `BrainGauges`).
   */
  selected(name: string, target: string): void;
}

/**
 * An empty set of limiters. It grows by one limiter per brain name and server ever
 * configured, which reloads do rarely; an old one is simply left idle. With `sharing` (replicas)
 * each limiter uses this runtime's share of its `max_concurrency` and tells the others of its
 * pauses.
 */
export function createBrainLimiters(sharing: BrainSharing = SOLE_BRAIN_SHARING): BrainLimiters {
  const limiters = new Map<
    string,
    { readonly name: string; readonly target: string; readonly limiter: BrainLimiter }
  >();
  const names = new Set<string>();
  const gauges = createBrainGauges();
  // The name is length-prefixed, so no pair of name and target can stand for another.
  const keyOf = (name: string, target: string) => `${name.length}:${name}:${target}`;
  const built: BrainLimiters = {
    limiterFor(name, target, options) {
      const key = keyOf(name, target);
      let entry = limiters.get(key);
      if (entry === undefined) {
        const limiter = createBrainLimiter(name, {
          ...options,
          metrics: gauges.forLimiter(name, key, options.metrics ?? noopMetrics),
          reportAtStart: !names.has(name),
          share: (max) => sharing.share(max, key),
          onPause: (until, status) => sharing.paused(target, until, status),
        });
        entry = { name, target, limiter };
        limiters.set(key, entry);
        names.add(name);
      }
      return entry.limiter;
    },
    selected(name, target) {
      const entry = limiters.get(keyOf(name, target));
      if (entry !== undefined) gauges.select(name, keyOf(name, target), () => entry.limiter.pausedUntil());
    },
    pauseTarget(target, until, status) {
      for (const entry of limiters.values()) if (entry.target === target) entry.limiter.pauseUntil(until, status);
    },
    pauseBrain(name, until, status, since) {
      for (const entry of limiters.values()) if (entry.name === name) entry.limiter.pauseUntil(until, status, since);
    },
    reshared() {
      for (const { limiter } of limiters.values()) limiter.reshared();
    },
    inFlight() {
      const calls = new Map<string, number>();
      for (const [key, { limiter }] of limiters) if (limiter.inFlight() > 0) calls.set(key, limiter.inFlight());
      return calls;
    },
  };
  sharing.attach?.(built);
  return built;
}

/** How long past its own time limit a call may hold its slot before it counts as lost. */
export const LEASE_MARGIN_MS = 5_000;

/** What {@link brainLimitsOf} finds in a brain's definition. */
export interface BrainLimits {
  /**
   * What the limiter stands for: the server the brain calls and the model it asks there. A
   * reload that keeps it keeps the limiter (see {@link BrainLimiters}).
   */
  readonly target: string;
  /** The limits of each call: `max_concurrency`, and the slot's lease from `timeout_ms`. */
  readonly call: CallLimits;
}

/**
 * The limits of a brain that calls out; undefined for `echo`, which calls nothing and is
 * never limited. A `workers-ai` call has no `timeout_ms`, so its lease is the longest
 * a brain's time limit may be.
 */
export function brainLimitsOf(definition: BrainConfig): BrainLimits | undefined {
  const call = (maxConcurrency: number, timeoutMs: number): CallLimits => ({
    maxConcurrency,
    leaseMs: timeoutMs + LEASE_MARGIN_MS,
  });
  switch (definition.type) {
    case "echo":
      return undefined;
    case "openai":
      return {
        target: `openai ${definition.base_url} ${definition.model}`,
        call: call(definition.max_concurrency, definition.timeout_ms),
      };
    case "http":
      return { target: `http ${definition.url}`, call: call(definition.max_concurrency, definition.timeout_ms) };
    case "rasa":
      return { target: `rasa ${definition.url}`, call: call(definition.max_concurrency, definition.timeout_ms) };
    case "workers-ai":
      return { target: `workers-ai ${definition.model}`, call: call(definition.max_concurrency, MAX_BRAIN_TIMEOUT_MS) };
    default: {
      // A new brain type must say here what it calls; until then this does not compile.
      const unknown: never = definition;
      return unknown;
    }
  }
}

/**
 * `brain` with its calls run through `limiter`, at most `limits.maxConcurrency` in flight. Calls
 * wait their turn per conversation (the request's channel and conversation id); while the
 * brain is paused they fail at once, retryable, with the time left as `retryAfterMs`.
 */
export function createLimitedBrain(brain: Brain, limits: CallLimits, limiter: BrainLimiter): Brain {
  return {
    // Everything the brain tells about itself stays as it is; only its calls are limited.
    ...brain,
    reply: (request) =>
      limiter.run(conversationKey(request.channel ?? "", request.message.conversationId), limits, () =>
        brain.reply(request),
      ),
  };
}
