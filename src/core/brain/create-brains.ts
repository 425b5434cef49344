import { ChannelError } from "../channel-error.js";
import { systemClock } from "../clock.js";
import type { BrainConfig, Config } from "../config/config-schema.js";
import type { Brain } from "./brain.js";
import type { BrainDeps } from "./brain-deps.js";
import { createEchoBrain } from "./echo-brain.js";
import { createFallbackBrain, fallbackChain } from "./fallback-brain.js";
import { createHttpBrain } from "./http-brain.js";
import { brainLimitsOf, createBrainLimiters, createLimitedBrain } from "./limits/brain-limits.js";
import { createOpenAiBrain } from "./openai-brain.js";
import { createRasaBrain } from "./rasa-brain.js";
import { createWorkersAiBrain } from "./workers-ai-brain.js";

/**
 * The brains the service may call: those a route names and every brain of their fallback
 * chains (see `fallbackChain`), `echo` included when one of them is the built-in.
 */
export function brainsInUse(config: Config): Set<string> {
  const definitions = config.brains ?? {};
  return new Set(config.routes.flatMap((route) => fallbackChain(route.brain, definitions)));
}

/**
 * Builds every brain in use (see {@link brainsInUse}), keyed by name, the built-in `echo`
 * included; a routed brain with a `fallback` list is its chain (`createFallbackBrain`).
 * Every brain that calls out (not `echo`) is limited to its `max_concurrency` calls in flight
 * and paused for everyone after a 429 or 503 (`createLimitedBrain`), before the chains are
 * built, so that each brain of a chain keeps its own limits and a paused one is passed over
 * at once. The limiters come from `deps.limiters` (new ones when absent).
 * Secrets are read from `deps.env` here, once. Throws a `config_invalid` ChannelError, naming
 * the brain, when a secret variable is unset or empty, when a `workers-ai` brain is in use but
 * the runtime has no AI binding (Node), or when a fallback names no brain.
 */
export function createBrains(config: Config, deps: BrainDeps): ReadonlyMap<string, Brain> {
  const definitions = config.brains ?? {};
  const brains = new Map<string, Brain>([["echo", createEchoBrain()]]);
  // Only brains in use are built: an unused definition (say a workers-ai brain in a file
  // shared with a Worker) must not stop the service.
  const inUse = brainsInUse(config);
  const limiters = deps.limiters ?? createBrainLimiters();
  const limiterOptions = {
    clock: deps.clock,
    logger: deps.logger,
    metrics: deps.metrics,
    waiterPollMs: deps.waiterPollMs,
    events: deps.operatorEvents,
  };
  // Applied once every brain is built: a brain that cannot be (a reload refused) changes no limit.
  const configured: (() => void)[] = [];
  for (const [name, definition] of Object.entries(definitions)) {
    if (!inUse.has(name)) continue;
    const brain = createBrain(name, definition, deps);
    const brainLimits = brainLimitsOf(definition);
    // echo calls nothing: it stays unwrapped, free on the hot path.
    if (brainLimits === undefined) brains.set(name, brain);
    else {
      const limiter = limiters.limiterFor(name, brainLimits.target, limiterOptions);
      configured.push(() => {
        limiters.selected(name, brainLimits.target);
        limiter.configure(brainLimits.call);
      });
      brains.set(name, createLimitedBrain(brain, brainLimits.call, limiter));
    }
  }
  // Chains are built over the plain (limited) brains, then replace the routed ones: a fallback
  // is asked alone, its own fallbacks being part of the chain already.
  const chains = new Map<string, Brain>();
  for (const route of config.routes) {
    const [name, ...fallbacks] = fallbackChain(route.brain, definitions);
    const primary = name === undefined ? undefined : brains.get(name);
    if (primary === undefined || fallbacks.length === 0) continue;
    chains.set(
      route.brain,
      createFallbackBrain(
        primary,
        fallbacks.map((fallback) => builtBrain(brains, fallback, route.brain)),
        deps.clock ?? systemClock,
      ),
    );
  }
  for (const [name, chain] of chains) brains.set(name, chain);
  for (const configure of configured) configure();
  return brains;
}

function createBrain(name: string, definition: BrainConfig, deps: BrainDeps): Brain {
  switch (definition.type) {
    case "echo":
      return createEchoBrain(name);
    case "openai":
      return createOpenAiBrain(name, definition, deps);
    case "http":
      return createHttpBrain(name, definition, deps);
    case "rasa":
      return createRasaBrain(name, definition, deps);
    case "workers-ai":
      if (deps.ai === undefined) {
        throw new ChannelError(
          "config_invalid",
          `brain "${name}" is of type "workers-ai", which needs the Workers runtime and its AI binding; this runtime has none (on Node, use an "openai" brain instead)`,
          { retryable: false, brain: name },
        );
      }
      return createWorkersAiBrain(name, definition, deps.ai);
    default:
      return assertNever(definition);
  }
}

/** A fallback by name; validateConfig refuses unknown names, so a miss is a config the service was not checked with. */
function builtBrain(brains: ReadonlyMap<string, Brain>, name: string, of: string): Brain {
  const brain = brains.get(name);
  if (brain === undefined) {
    throw new ChannelError("config_invalid", `brain "${of}" falls back on "${name}", which is not defined`, {
      retryable: false,
      brain: of,
    });
  }
  return brain;
}

function assertNever(value: never): never {
  throw new Error(`unknown brain definition ${JSON.stringify(value)}`);
}
