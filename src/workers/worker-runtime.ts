import { createApp } from "../core/app/create-app.js";
import type { Brain } from "../core/brain/brain.js";
import type { AiBinding } from "../core/brain/brain-deps.js";
import { createBrains } from "../core/brain/create-brains.js";
import { ChannelError, errorMessage } from "../core/channel-error.js";
import { type Clock, type IdGenerator, randomId, systemClock } from "../core/clock.js";
import { formatProblem } from "../core/config/config-problem.js";
import type { Config } from "../core/config/config-schema.js";
import { channelName } from "../core/config/validate-config.js";
import { createConsumer } from "../core/consumer/create-consumer.js";
import { createFetchPoster } from "../core/delivery/fetch-poster.js";
import type { Poster } from "../core/delivery/poster.js";
import { problemResponse } from "../core/http/problem-response.js";
import { createJsonLogger, type Logger } from "../core/log/logger.js";
import { createCloudflareQueue } from "./cloudflare-queue.js";
import { createDeadLetterBatchHandler } from "./dead-letter-batch.js";
import { createDurableConversationStore } from "./durable-conversation-store.js";
import { createDurableIdempotencyStore } from "./durable-idempotency-store.js";
import { createDurablePendingJobStore } from "./durable-pending-job-store.js";
import { createDurableSequenceCounter } from "./durable-sequence-counter.js";
import { createInboundBatchHandler } from "./inbound-batch.js";
import { loadWorkerConfig } from "./load-worker-config.js";
import { envString, type WorkerEnv } from "./worker-env.js";

/** Seconds before inbound messages are tried again while the configuration is unusable. */
const MISCONFIGURED_RETRY_SECONDS = 60;

/** Everything the Worker's handlers need, built once per isolate and environment. */
export interface WorkerRuntime {
  readonly logger: Logger;
  /** Serves the core app (or a 500 while the configuration is unusable). */
  fetch(request: Request): Promise<Response>;
  /** Consumes a batch of the inbound queue. */
  inbound(batch: MessageBatch<unknown>): Promise<void>;
  /** Consumes a batch of the dead-letter queue. */
  deadLetters(batch: MessageBatch<unknown>): Promise<void>;
}

/** Replacements for tests; production uses none. */
export interface WorkerRuntimeOverrides {
  readonly brains?: (config: Config) => ReadonlyMap<string, Brain>;
  readonly poster?: Poster;
  readonly clock?: Clock;
  readonly newId?: IdGenerator;
  readonly random?: () => number;
  /** Receives each log line; default `console.log`, which Workers Logs and `wrangler tail` show. */
  readonly write?: (line: string) => void;
}

/**
 * Builds the runtime from the environment. An unusable configuration (invalid, or a secret
 * missing) does not throw: it is logged in full, every request gets a 500 problem+json
 * that names no detail (the logs do), and inbound messages wait on the queue for a fix.
 */
export async function createWorkerRuntime(
  env: WorkerEnv,
  overrides: WorkerRuntimeOverrides = {},
): Promise<WorkerRuntime> {
  const write = overrides.write ?? ((line: string) => console.log(line));
  const clock = overrides.clock ?? systemClock;
  const newId = overrides.newId ?? randomId;
  const random = overrides.random ?? Math.random;
  const jobs = createDurablePendingJobStore(env.CONVERSATIONS);
  const loaded = loadWorkerConfig(env);

  if (!loaded.ok) {
    const logger = createJsonLogger(write, "info");
    for (const problem of loaded.problems) {
      logger.error(`invalid configuration (${loaded.source}): ${formatProblem(problem)}`);
    }
    return misconfigured(logger, createDeadLetterBatchHandler({ jobs, logger }));
  }

  const { config, secrets, source } = loaded;
  const logger = createJsonLogger(write, config.log_level);
  try {
    const queue = createCloudflareQueue({
      binding: env.INBOUND,
      store: jobs,
      logger,
    });
    const app = createApp({
      channels: config.channels,
      secretFor: (name) => secrets.get(name) ?? "",
      queueFor: () => queue,
      idempotency: createDurableIdempotencyStore(env.IDEMPOTENCY),
      clock,
      newId,
      logger,
    });
    // `fetch` is looked up on each call, not captured, so the platform's (or a test's) is used.
    const lateFetch: typeof fetch = (input, init) => fetch(input, init);
    const lookup = (name: string) => envString(env, name);
    const consumer = await createConsumer({
      config,
      brains:
        overrides.brains?.(config) ?? createBrains(config, { fetch: lateFetch, env: lookup, ...aiOf(env), clock }),
      poster: overrides.poster ?? createFetchPoster(lateFetch),
      store: createDurableConversationStore(env.CONVERSATIONS),
      sequences: createDurableSequenceCounter(env.CONVERSATIONS),
      clock,
      random,
      newId,
      logger,
      env: lookup,
    });
    const inbound = createInboundBatchHandler({
      consumer,
      jobs,
      deadLetters: env.DEAD_LETTERS,
      clock,
      logger,
      random,
    });
    logger.info("configuration loaded", {
      source,
      channels: config.channels.map((channel) => ({ name: channelName(channel), path: channel.webhook.path })),
    });
    return {
      logger,
      fetch: async (request) => await app.fetch(request),
      inbound,
      deadLetters: createDeadLetterBatchHandler({ jobs, logger }),
    };
  } catch (error) {
    logger.error(`cannot start (${source}): ${errorMessage(error)}`);
    return misconfigured(logger, createDeadLetterBatchHandler({ jobs, logger }));
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

function misconfigured(logger: Logger, deadLetters: (batch: MessageBatch<unknown>) => Promise<void>): WorkerRuntime {
  return {
    logger,
    fetch: () => {
      logger.error("request refused: the configuration is unusable (see the earlier lines)");
      const error = new ChannelError(
        "config_invalid",
        "The service is not configured correctly; its operator can find the problem in its logs.",
        { status: 500 },
      );
      return Promise.resolve(problemResponse(error));
    },
    inbound: (batch) => {
      logger.error("inbound messages wait: the configuration is unusable (see the earlier lines)", {
        count: batch.messages.length,
      });
      for (const message of batch.messages) message.retry({ delaySeconds: MISCONFIGURED_RETRY_SECONDS });
      return Promise.resolve();
    },
    deadLetters,
  };
}
