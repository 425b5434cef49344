import type { Brain } from "../core/brain/brain.js";
import type { AiBinding } from "../core/brain/brain-deps.js";
import { createBrains } from "../core/brain/create-brains.js";
import { errorMessage } from "../core/channel-error.js";
import { randomId, systemClock } from "../core/clock.js";
import { formatProblem } from "../core/config/config-problem.js";
import type { Config } from "../core/config/config-schema.js";
import { createChannelRoutes } from "../core/consumer/channel-routes.js";
import { type Consumer, createConsumer } from "../core/consumer/create-consumer.js";
import type { ConversationStore } from "../core/conversation/conversation-store.js";
import type { SequenceCounter } from "../core/conversation/sequence-counter.js";
import { createFetchPoster } from "../core/delivery/fetch-poster.js";
import type { Poster } from "../core/delivery/poster.js";
import { createJsonLogger, type Logger } from "../core/log/logger.js";
import type { Metrics } from "../core/metrics/metrics.js";
import { metricsOf } from "./analytics-engine-metrics.js";
import { loadWorkerConfig, type WorkerConfig } from "./load-worker-config.js";
import { envString, type WorkerEnv } from "./worker-env.js";

/** What answering messages is built from, out of one Worker environment. */
export interface DeliveryParts {
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
}

/** The parts, or why there are none: one log line per problem, with its path and fix. */
export type Delivery =
  | { readonly ok: true; readonly parts: DeliveryParts }
  | { readonly ok: false; readonly logger: Logger; readonly problems: readonly string[] };

// Keyed by the environment object: the platform hands every invocation of an isolate the
// same one (the Worker's handlers and the Durable Objects alike), so the configuration is
// validated once per isolate, while a test that passes its own environment gets its own.
const built = new WeakMap<WorkerEnv, Promise<Delivery>>();

/**
 * The delivery parts of `env`, built on first use: the configuration (validated, secrets
 * present), the logger, the brains and the poster, and a check that every channel's route
 * can be built (a signing secret that is not `whsec_`, a `workers-ai` brain without the AI
 * binding...). The Worker builds them to serve and to check; each conversation's Durable
 * Object builds its consumer from the same parts, so both answer from one configuration.
 */
export function deliveryFor(env: WorkerEnv): Promise<Delivery> {
  let delivery = built.get(env);
  if (delivery === undefined) {
    delivery = buildDelivery(env);
    built.set(env, delivery);
  }
  return delivery;
}

/**
 * The consumer that runs a conversation's jobs inside its Durable Object, with the object's
 * own memory and sequence counter (no RPC back to itself).
 */
export async function createObjectConsumer(
  parts: DeliveryParts,
  memory: { readonly store: ConversationStore; readonly sequences: SequenceCounter },
): Promise<Consumer> {
  return await createConsumer({
    config: parts.config,
    brains: parts.brains,
    poster: parts.poster,
    store: memory.store,
    sequences: memory.sequences,
    clock: systemClock,
    random: Math.random,
    newId: randomId,
    logger: parts.logger,
    env: parts.lookup,
    metrics: parts.metrics,
  });
}

async function buildDelivery(env: WorkerEnv): Promise<Delivery> {
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
  // `fetch` is looked up on each call, not captured, so the platform's (or a test's) is used.
  const lateFetch: typeof fetch = (input, init) => fetch(input, init);
  const lookup = (name: string) => envString(env, name);
  try {
    const brains = createBrains(config, { fetch: lateFetch, env: lookup, ...aiOf(env), clock: systemClock });
    await createChannelRoutes(config, brains, lookup);
    const poster = createFetchPoster(lateFetch);
    const parts = { config, source, secrets, logger, brains, poster, lookup, metrics: metricsOf(env) };
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
