import type { AdminDeps } from "../core/admin/admin-routes.js";
import { createApp } from "../core/app/create-app.js";
import { createMemoryAuthFailureLimiter } from "../core/auth-limit/memory-auth-failure-limiter.js";
import { ChannelError, errorMessage } from "../core/channel-error.js";
import { systemClock, timeOrderedId } from "../core/clock.js";
import type { Config } from "../core/config/config-schema.js";
import { channelName } from "../core/config/validate-config.js";
import { problemResponse } from "../core/http/problem-response.js";
import type { Logger } from "../core/log/logger.js";
import { type ReceiverDownEntry, receiversDown } from "../core/receiver/receiver-standing.js";
import { createTimelineAdmin } from "../core/timeline/timeline-admin.js";
import { createDurableAuthFailureLimiter } from "./auth-failures/durable-auth-failure-limiter.js";
import { createCloudflareQueue } from "./cloudflare-queue.js";
import { createDurablePendingJobStore } from "./conversation/durable-pending-job-store.js";
import { createDeadLetterBatchHandler } from "./dead-letters/dead-letter-batch.js";
import {
  countDeadLetters,
  createDurableAdminDeadLetters,
  deadLetterKnown,
} from "./dead-letters/durable-dead-letter-store.js";
import type { BuiltParts } from "./environment-parts.js";
import { createDurableIdempotencyStore } from "./idempotency/durable-idempotency-store.js";
import { createInboundBatchHandler } from "./inbound-batch.js";
import type { DeferredTimeline } from "./timeline/deferred-timeline.js";
import { timelineFor } from "./timeline/workers-timeline.js";
import { envString, type WorkerEnv } from "./worker-env.js";
import { createWorkersStatus } from "./workers-status.js";

/** Seconds before inbound messages are tried again while the configuration is unusable. */
const MISCONFIGURED_RETRY_SECONDS = 60;

/** Everything the Worker's handlers need, built once per isolate and environment. */
export interface WorkerRuntime {
  readonly logger: Logger;
  /**
   * Serves the core app (or a 500 while the configuration is unusable). What it recorded in the
   * message timeline is written under `waitUntil` once answered, or before answering without one.
   */
  fetch(request: Request, waitUntil?: (work: Promise<unknown>) => void): Promise<Response>;
  /** Consumes a batch of the inbound queue: hands each message to its conversation's object. */
  inbound(batch: MessageBatch<unknown>): Promise<void>;
  /** Consumes a batch of the dead-letter queue. */
  deadLetters(batch: MessageBatch<unknown>): Promise<void>;
}

/**
 * Builds the runtime from the environment and the parts built from it (`environment-parts.ts`
 * builds both, once per environment; each conversation's Durable Object answers from the same
 * parts). An unusable configuration (invalid, a secret missing, a route that cannot be built)
 * does not throw: it is logged in full, every request gets a 500 problem+json that names no
 * detail (the logs do), and inbound messages wait on the queue for a fix.
 */
export function createWorkerRuntime(env: WorkerEnv, built: BuiltParts): WorkerRuntime {
  const jobs = createDurablePendingJobStore(env.CONVERSATIONS, env.DEAD_LETTER_STORE);
  const known = deadLetterKnown(env.DEAD_LETTER_STORE);

  if (!built.ok) {
    const { logger } = built;
    for (const problem of built.problems) logger.error(problem);
    return misconfigured(logger, createDeadLetterBatchHandler({ jobs, logger, known }));
  }

  const { config, secrets, source, logger, metrics } = built.parts;
  try {
    // Accepted messages and admin replays are recorded here; runs in the conversation objects.
    const timeline = timelineFor(env, built.parts);
    const queue = createCloudflareQueue({
      binding: env.INBOUND,
      store: jobs,
      logger,
    });
    const app = createApp({
      channels: config.channels,
      secretsFor: (name) => secrets.get(name) ?? [],
      queueFor: () => queue,
      idempotency: createDurableIdempotencyStore(env.IDEMPOTENCY),
      // Failed authentications count per channel and client address, across isolates, and in
      // this isolate at once, so that guesses sent together are held by its own count.
      authFailures: createDurableAuthFailureLimiter(env.AUTH_FAILURES, systemClock),
      localAuthFailures: createMemoryAuthFailureLimiter(systemClock),
      peerAddress: (request) => request.headers.get("cf-connecting-ip"),
      clock: systemClock,
      newId: timeOrderedId,
      logger,
      metrics,
      timeline,
      // A Worker has no backlog of its own to report (the platform's queue holds it); its dead
      // letters are counted by the one object that keeps them, and null when it cannot answer.
      readiness: {
        report: async () => {
          const [deadLetters, receiversDown] = await Promise.all([
            countDeadLetters(env.DEAD_LETTER_STORE).catch(() => null),
            receiversDownOf(env.RECEIVERS, config.channels.map(channelName)),
          ]);
          return {
            status: "ready",
            dead_letters: deadLetters,
            ...(receiversDown.length === 0 ? {} : { receivers_down: receiversDown }),
          };
        },
      },
      ...adminOf(config, env, timeline),
    });
    const inbound = createInboundBatchHandler({
      conversations: env.CONVERSATIONS,
      deadLetters: env.DEAD_LETTERS,
      logger,
      random: Math.random,
    });
    logger.info("configuration loaded", {
      source,
      channels: config.channels.map((channel) => ({ name: channelName(channel), path: channel.webhook.path })),
    });
    return {
      logger,
      async fetch(request, waitUntil) {
        const response = await app.fetch(request);
        const written = timeline?.flush();
        if (written !== undefined) {
          if (waitUntil === undefined) await written;
          else waitUntil(written);
        }
        return response;
      },
      inbound,
      deadLetters: createDeadLetterBatchHandler({ jobs, logger, known }),
    };
  } catch (error) {
    logger.error(`cannot start (${source}): ${errorMessage(error)}`);
    return misconfigured(logger, createDeadLetterBatchHandler({ jobs, logger, known }));
  }
}

/**
 * The channels whose receiver is down, as `/readyz` lists them: one read of each channel's
 * receiver object. A receiver that cannot be asked is left out; readiness stays `ready`.
 */
async function receiversDownOf(
  receivers: WorkerEnv["RECEIVERS"],
  channels: readonly string[],
): Promise<ReceiverDownEntry[]> {
  const standings = await Promise.all(
    channels.map(async (channel) => {
      try {
        return [{ channel, standing: await receivers.get(receivers.idFromName(channel)).status() }];
      } catch {
        return [];
      }
    }),
  );
  return receiversDown(standings.flat(), Date.now());
}

/**
 * The admin API when `admin` is configured; its secret was checked with the configuration. With
 * the timeline on, it reads the timeline and records each replay there.
 */
function adminOf(config: Config, env: WorkerEnv, timeline: DeferredTimeline | undefined): { admin?: AdminDeps } {
  if (config.admin === undefined) return {};
  const variable = config.admin.token_env;
  return {
    admin: {
      secret: () => envString(env, variable) ?? "",
      deadLetters: createDurableAdminDeadLetters(
        env.DEAD_LETTER_STORE,
        timeline === undefined ? undefined : { recorder: timeline, now: () => Date.now() },
        config.channels.map(channelName),
      ),
      timeline: timeline === undefined ? undefined : createTimelineAdmin(timeline.store, systemClock),
      status: createWorkersStatus(env, config.channels.map(channelName)),
    },
  };
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
