import type { Brain } from "../core/brain/brain.js";
import type { AiBinding } from "../core/brain/brain-deps.js";
import { createBrains } from "../core/brain/create-brains.js";
import { errorMessage } from "../core/channel-error.js";
import { systemClock } from "../core/clock.js";
import { formatProblem } from "../core/config/config-problem.js";
import type { Config } from "../core/config/config-schema.js";
import { createChannelRoutes } from "../core/consumer/channel-routes.js";
import { createJsonLogger, type Logger } from "../core/log/logger.js";
import type { Metrics } from "../core/metrics/metrics.js";
import { createOperatorEventRoutes, type OperatorEventRoutes } from "../core/operator-events/operator-event-routes.js";
import { createFetchPoster } from "../core/outbound/fetch-poster.js";
import type { Poster } from "../core/outbound/poster.js";
import { metricsOf } from "./analytics-engine-metrics.js";
import { BufferedOperatorEvents } from "./buffered-operator-events.js";
import { loadWorkerConfig, type WorkerConfig } from "./load-worker-config.js";
import { envString, type WorkerEnv } from "./worker-env.js";

/**
 * How often a brain call waiting for a slot looks whether it got one (see `waiterPollMs`):
 * short next to a brain call, and a timer only while calls wait.
 */
const WAITER_POLL_MS = 20;

/** What answering messages is built from, out of one Worker environment. */
export interface EnvironmentParts {
  readonly config: Config;
  /** Where the configuration came from, for the logs. */
  readonly source: string;
  /** The inbound secrets of each channel, by channel name. */
  readonly secrets: Extract<WorkerConfig, { ok: true }>["secrets"];
  readonly logger: Logger;
  readonly brains: ReadonlyMap<string, Brain>;
  readonly poster: Poster;
  /** Reads the environment's string variables (secrets named by `*_env` keys). */
  readonly lookup: (name: string) => string | undefined;
  /** The `METRICS` Analytics Engine dataset when bound; noop otherwise. */
  readonly metrics: Metrics;
  /** Where operator events go; each Durable Object sends its own (`ObjectOperatorEvents`). */
  readonly operatorRoutes: OperatorEventRoutes;
  /** The brains' pauses and resumptions, kept until an object of the isolate sends them. */
  readonly brainEvents: BufferedOperatorEvents;
}

/** The parts, or why there are none: one log line per problem, with its path and fix. */
export type BuiltParts =
  | { readonly ok: true; readonly parts: EnvironmentParts }
  | { readonly ok: false; readonly logger: Logger; readonly problems: readonly string[] };

// Keyed by the environment object: the platform hands every invocation of an isolate the
// same one (the Worker's handlers and the Durable Objects alike), so the configuration is
// validated once per isolate, while a test that passes its own environment gets its own.
const cache = new WeakMap<WorkerEnv, Promise<BuiltParts>>();

/**
 * The parts of `env`, built on first use: the configuration (validated, secrets present), the
 * logger, the brains and the poster, and a check that every channel's route can be built (a
 * signing secret that is not `whsec_`, a `workers-ai` brain without the AI binding...). The
 * Worker builds its runtime from them (`runtimeFor`); each conversation's Durable Object
 * builds its consumer from the same parts, so both answer from one configuration.
 */
export function partsFor(env: WorkerEnv): Promise<BuiltParts> {
  let parts = cache.get(env);
  if (parts === undefined) {
    parts = buildParts(env);
    cache.set(env, parts);
  }
  return parts;
}

async function buildParts(env: WorkerEnv): Promise<BuiltParts> {
  const write = (line: string) => console.log(line);
  const loaded = loadWorkerConfig(env);
  if (!loaded.ok) {
    const logger = createJsonLogger(write, "info");
    const problems = loaded.problems.map(
      (problem) => `invalid configuration (${loaded.source}): ${formatProblem(problem)}`,
    );
    return { ok: false, logger, problems };
  }
  const { config, secrets, source } = loaded;
  const logger = createJsonLogger(write, config.log_level);
  for (const warning of loaded.warnings) logger.warn(`configuration (${source}): ${formatProblem(warning)}`);
  // `fetch` is looked up on each call, not captured, so the platform's (or a test's) is used.
  const lateFetch: typeof fetch = (input, init) => fetch(input, init);
  const lookup = (name: string) => envString(env, name);
  const metrics = metricsOf(env);
  try {
    const poster = createFetchPoster(lateFetch, (binding) => bindingFetchOf(env, binding));
    const operatorRoutes = await createOperatorEventRoutes(config, lookup);
    const brainEvents = new BufferedOperatorEvents(logger, metrics);
    // Built once per isolate: the brains' limits (max_concurrency, a pause after a 429 or 503)
    // hold for the calls of this isolate, shared by the Worker and every Durable Object in it;
    // so a call waiting for a slot learns it on a timer of its own object (WAITER_POLL_MS).
    const brains = createBrains(config, {
      fetch: lateFetch,
      env: lookup,
      ...aiOf(env),
      clock: systemClock,
      logger,
      metrics,
      waiterPollMs: WAITER_POLL_MS,
      operatorEvents: brainEvents,
    });
    await createChannelRoutes(config, brains, lookup);
    const parts = { config, source, secrets, logger, brains, poster, lookup, metrics, operatorRoutes, brainEvents };
    return { ok: true, parts };
  } catch (error) {
    return { ok: false, logger, problems: [`cannot start (${source}): ${errorMessage(error)}`] };
  }
}

/** The Workers AI binding (`[ai] binding = "AI"`), when wrangler.toml declares one. */
function aiOf(env: WorkerEnv): { ai?: AiBinding } {
  const ai = env.AI;
  if (ai !== null && typeof ai === "object" && "run" in ai && typeof ai.run === "function") {
    const run = ai.run.bind(ai) as AiBinding["run"];
    return { ai: { run } };
  }
  return {};
}

/**
 * The `fetch` of an `[[mtls_certificates]]` binding (a channel's `tls.mtls_binding`): requests
 * through it present the uploaded client certificate. Looked up per call, as `fetch` is.
 */
function bindingFetchOf(env: WorkerEnv, name: string): typeof fetch | undefined {
  const binding = env[name];
  if (binding === null || typeof binding !== "object" || !("fetch" in binding) || typeof binding.fetch !== "function") {
    return undefined;
  }
  return binding.fetch.bind(binding) as typeof fetch;
}
