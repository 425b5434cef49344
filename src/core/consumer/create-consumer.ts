import type { Brain, BrainCall } from "../brain/brain.js";
import { ChannelError, errorMessage, toChannelError } from "../channel-error.js";
import type { Clock, IdGenerator } from "../clock.js";
import type { Config } from "../config/config-schema.js";
import type { ConversationStore } from "../conversation/conversation-store.js";
import type { SequenceCounter } from "../conversation/sequence-counter.js";
import type { Logger } from "../log/logger.js";
import { redactUrl } from "../log/redact-url.js";
import type { Metrics } from "../metrics/metrics.js";
import { noopMetrics } from "../metrics/noop-metrics.js";
import type { Poster } from "../outbound/poster.js";
import type { Job, JobOutcome, PendingReply } from "../sequencer/job.js";
import { type AnswerSteps, createAnswerSteps } from "./answer-message.js";
import { type ChannelRoute, createChannelRoutes } from "./channel-routes.js";
import { classifyFailure } from "./classify-failure.js";
import { recordBrainStep } from "./record-brain-step.js";

/** What the consumer is built from. */
export interface ConsumerDeps {
  readonly config: Config;
  readonly brains: ReadonlyMap<string, Brain>;
  readonly poster: Poster;
  readonly store: ConversationStore;
  readonly sequences: SequenceCounter;
  readonly clock: Clock;
  /** Uniform in [0, 1), for backoff jitter. */
  readonly random: () => number;
  readonly newId: IdGenerator;
  readonly logger: Logger;
  /** Reads `signing_secret_env` and `outbound_token_env` variables. */
  readonly env: (name: string) => string | undefined;
  /** Times brain calls, reply POSTs and whole messages, counts retries and dead letters; default none. */
  readonly metrics?: Metrics;
}

/** Called after each step of a job that a queue may want to persist. */
export type ProgressHook = (job: Job) => void | Promise<void>;

/** Takes accepted messages off a queue and answers them. */
export interface Consumer {
  /**
   * Runs a job as far as it goes: asks the brain unless the job already holds its replies,
   * then delivers the undelivered replies in order. Stops at the first failure and says
   * whether to retry (and after how long) or to dead-letter the job. Never rejects.
   */
  run(job: Job, onProgress?: ProgressHook): Promise<JobOutcome>;
}

/** What a reload of the consumer's routes is built from. */
export type ConsumerReload = Pick<ConsumerDeps, "config" | "brains" | "env">;

/** A consumer whose channel routes (outbound settings, brains, secrets) can be replaced while it runs. */
export interface ReloadableConsumer extends Consumer {
  /**
   * Builds the routes of `next` and swaps them in; rejects with `config_invalid`, keeping the
   * routes it had, when one is unusable. A run in progress finishes its attempt on the routes
   * it started with; every later run, a retry included, uses the new ones.
   */
  reload(next: ConsumerReload): Promise<void>;
}

/**
 * Builds the consumer: the channel routes (rejecting with `config_invalid` when one is
 * unusable), the steps of answering, and the job state machine that runs them.
 */
export async function createConsumer(deps: ConsumerDeps): Promise<ReloadableConsumer> {
  let routes = await createChannelRoutes(deps.config, deps.brains, deps.env);
  const runner = createJobRunner(() => routes, createAnswerSteps(deps), deps);
  return {
    run: runner.run,
    async reload(next) {
      routes = await createChannelRoutes(next.config, next.brains, next.env);
    },
  };
}

/**
 * The job state machine: brain (unless the replies are known), then each undelivered reply
 * in order, saving progress after each step so a resumed job never repeats one. A failure is
 * classified by {@link classifyFailure}; this only logs the verdict. `routes` is asked at
 * the start of each run, so that a reload reaches the next attempt of every job.
 */
export function createJobRunner(
  routes: () => ReadonlyMap<string, ChannelRoute>,
  steps: AnswerSteps,
  deps: Pick<ConsumerDeps, "clock" | "random" | "logger" | "metrics">,
): Consumer {
  const { clock, logger, random } = deps;
  const metrics = deps.metrics ?? noopMetrics;

  const failure = (route: ChannelRoute, job: Job, thrown: unknown, attemptAt: number): JobOutcome => {
    const error = toChannelError(thrown);
    const verdict = classifyFailure({
      job,
      error,
      attemptAt,
      now: clock.now(),
      policy: route.policy,
      jitter: random(),
    });
    const fields = {
      channel: job.message.channel,
      message_id: job.message.id,
      trace_id: job.message.trace?.traceId,
      conversation_id: job.message.message.conversationId,
      reply_id: job.replies?.[job.delivered]?.id,
      step: job.replies === undefined ? "brain" : "delivery",
      code: error.code,
      status: error.upstreamStatus,
      attempts: verdict.job.attempts,
      ...(job.replies === undefined ? {} : { url: redactUrl(route.url) }),
    };
    if (verdict.kind === "retry") {
      if (job.replies !== undefined) metrics.retry(job.message.channel);
      logger.warn(`attempt failed, retrying: ${error.message}`, { ...fields, retry_in_ms: verdict.delayMs });
      return verdict;
    }
    if (error.upstreamStatus === 410 && job.replies !== undefined) {
      logger.error("outbound_url answered 410 Gone: the receiver says it no longer exists", fields);
    }
    metrics.deadLetter(job.message.channel);
    return { kind: "dead", job: verdict.job, error: verdict.error, reason: verdict.reason };
  };

  const run = async (job: Job, onProgress?: ProgressHook): Promise<JobOutcome> => {
    const route = routes().get(job.message.channel);
    if (route === undefined) {
      const error = {
        code: "config_invalid",
        message: `no channel named "${job.message.channel}" is configured`,
        retryable: false,
      };
      metrics.deadLetter(job.message.channel);
      return { kind: "dead", job: { ...job, lastError: error }, error };
    }
    let current = job;
    if (current.replies === undefined) {
      const attemptAt = clock.now();
      const calls: BrainCall[] = [];
      const brainStep = (ok: boolean) =>
        recordBrainStep(
          {
            channel: route.channel,
            brainName: route.brainName,
            calls,
            ok,
            seconds: (clock.now() - attemptAt) / 1000,
            fields: () => ({
              channel: job.message.channel,
              message_id: job.message.id,
              trace_id: job.message.trace?.traceId,
              conversation_id: job.message.message.conversationId,
            }),
          },
          metrics,
          logger,
        );
      let replies: PendingReply[];
      try {
        replies = await steps.produce(route, current.message, (call) => calls.push(call));
      } catch (error) {
        brainStep(false);
        return failure(route, current, error, attemptAt);
      }
      brainStep(true);
      current = { message: current.message, replies, delivered: 0, attempts: 0 };
      if (replies.length > 0) {
        const saved = await save(onProgress, current);
        if (saved !== undefined) return failure(route, current, saved, attemptAt);
      }
    }
    if (current.renumber === true) {
      const attemptAt = clock.now();
      try {
        current = await steps.renumber(current);
      } catch (error) {
        return failure(route, current, error, attemptAt);
      }
      const saved = await save(onProgress, current);
      if (saved !== undefined) return failure(route, current, saved, attemptAt);
    }
    const replies = current.replies ?? [];
    while (current.delivered < replies.length) {
      const reply = replies[current.delivered];
      if (reply === undefined) break;
      const attemptAt = clock.now();
      try {
        await steps.post(route, reply, current.message.trace);
      } catch (error) {
        return failure(route, current, error, attemptAt);
      }
      metrics.delivered(route.channel, (clock.now() - attemptAt) / 1000);
      if (logger.enabled("debug")) {
        logger.debug("reply delivered", {
          message_id: current.message.id,
          trace_id: current.message.trace?.traceId,
          reply_id: reply.id,
          body: reply.body,
        });
      }
      current = { message: current.message, replies, delivered: current.delivered + 1, attempts: 0 };
      if (current.delivered < replies.length) {
        const saved = await save(onProgress, current);
        if (saved !== undefined) return failure(route, current, saved, attemptAt);
      }
    }
    metrics.endToEnd(route.channel, (clock.now() - current.message.receivedAt) / 1000);
    return { kind: "done", job: current };
  };

  return { run };
}

/** Runs the progress hook; returns its failure, as a retryable error, instead of throwing. */
async function save(onProgress: ProgressHook | undefined, job: Job): Promise<ChannelError | undefined> {
  try {
    await onProgress?.(job);
    return undefined;
  } catch (error) {
    return new ChannelError("internal_error", `cannot save progress: ${errorMessage(error)}`, {
      retryable: true,
      cause: error,
    });
  }
}
