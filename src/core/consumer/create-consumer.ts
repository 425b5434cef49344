import type { Brain, BrainCall } from "../brain/brain.js";
import { ChannelError, errorMessage, toChannelError } from "../channel-error.js";
import type { Clock, IdGenerator } from "../clock.js";
import type { Config } from "../config/config-schema.js";
import type { ConversationStore } from "../conversation/conversation-store.js";
import type { Job, JobOutcome, PendingReply } from "../lifecycle/job.js";
import { type Answered, isLaneFenced } from "../lifecycle/lane-store.js";
import type { Logger } from "../log/logger.js";
import type { Metrics } from "../metrics/metrics.js";
import { noopMetrics } from "../metrics/noop-metrics.js";
import type { Poster } from "../outbound/poster.js";
import type { Admission } from "../receiver/receiver-circuit.js";
import type { RunEvent } from "../timeline/timeline-event.js";
import { type AnswerSteps, createAnswerSteps } from "./answer-message.js";
import { type ChannelRoute, createChannelRoutes } from "./channel-routes.js";
import { type BrainTokens, recordBrainStep } from "./record-brain-step.js";
import { attemptEvent, brainCallEvents, replyEvents } from "./run-events.js";
import { createStepFailures, isReceiverFailure } from "./step-failures.js";

/** What the consumer is built from. */
export interface ConsumerDeps {
  readonly config: Config;
  readonly brains: ReadonlyMap<string, Brain>;
  readonly poster: Poster;
  /** Conversation memory, read for the brain's history. */
  readonly store: ConversationStore;
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

/**
 * How a run stores its steps, given by the lane runner: the number its first new reply takes,
 * and the write of each step. A write that rejects stored nothing; one refused with
 * `lane_fenced` stops the run at once (outcome `fenced`), posting nothing more.
 */
export interface RunHooks {
  /** The lane's last `sequence` + 1: what the first reply of a brain step (or of a renumbering) takes. */
  readonly firstSequence: number;
  /** Stores a step; `answered` when the job's replies were just made (with the turns to keep). */
  save(job: Job, answered?: Answered): void | Promise<void>;
  /** Hears of each brain call, reply and POST attempt, for the message's timeline; default none. */
  readonly record?: ((events: readonly RunEvent[]) => void) | undefined;
  /**
   * Whether the channel's receiver is down now, as the circuit last heard: a run admitted to
   * `send` that has had no POST answered yet holds its replies rather than post into an outage
   * that began while it asked its brain. Default never.
   */
  readonly receiverDown?: (() => boolean) | undefined;
}

/** The hooks of a run nothing stores (tests, a first message): numbering from 1. */
export const UNSTORED: RunHooks = { firstSequence: 1, save: () => undefined };

/** Takes accepted messages off a queue and answers them. */
export interface Consumer {
  /**
   * Runs a job as far as it goes: asks the brain unless the job already holds its replies,
   * then delivers the undelivered replies in order. Stops at the first failure and says
   * whether to retry (and after how long) or to dead-letter the job. `admission` (default
   * `send`) is what the receiver circuit allows: with `wait` the replies are produced but held
   * (a `wait` outcome); a POST the receiver does not answer comes back `unanswered`, for the
   * circuit to rule on. `hooks` store each step (see {@link RunHooks}). Never rejects.
   */
  run(job: Job, hooks?: RunHooks, admission?: Admission): Promise<JobOutcome>;
}

/** What a reload of the consumer's routes is built from. */
export type ConsumerReload = Pick<ConsumerDeps, "config" | "brains" | "env">;

/** A consumer whose channel routes (outbound settings, brains, secrets) can be replaced while it runs. */
export interface ReloadableConsumer extends Consumer {
  /**
   * Builds the routes of `next` and swaps them in; rejects with `config_invalid`, keeping the
   * routes it had, when one is unusable. A brain call in progress finishes on the routes it
   * started with; every POST from then on, and every later run, uses the new ones.
   */
  reload(next: ConsumerReload): Promise<void>;
}

/**
 * Builds the consumer: the channel routes (rejecting with `config_invalid` when one is
 * unusable), the steps of answering, and the job state machine that runs them.
 */
export async function createConsumer(deps: ConsumerDeps): Promise<ReloadableConsumer> {
  let routes = await createChannelRoutes(deps.config, deps.brains, deps.env);
  const runner = createJobRunner(() => routes, createAnswerSteps(deps), {
    ...deps,
    keepText: deps.config.timeline.keep_text,
  });
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
  deps: Pick<ConsumerDeps, "clock" | "random" | "logger" | "metrics"> & { readonly keepText?: boolean },
): Consumer {
  const { clock, logger, random } = deps;
  const metrics = deps.metrics ?? noopMetrics;

  const { failure, unanswered, hold } = createStepFailures({ clock, random, logger, metrics });
  const keepText = deps.keepText ?? false;

  const run = async (job: Job, hooks: RunHooks = UNSTORED, admission: Admission = "send"): Promise<JobOutcome> => {
    const route = routes().get(job.message.channel);
    if (route === undefined) {
      const error = {
        code: "config_invalid",
        message: `no channel named "${job.message.channel}" is configured`,
        retryable: false,
      };
      return { kind: "dead", job: { ...job, lastError: error }, error };
    }
    let current = job;
    if (current.replies === undefined) {
      const attemptAt = clock.now();
      const calls: BrainCall[] = [];
      const usage: BrainTokens[] = [];
      const brainStep = (ok: boolean, error?: unknown) => {
        hooks.record?.(
          brainCallEvents({
            brain: route.brainName,
            at: attemptAt,
            durationMs: clock.now() - attemptAt,
            calls,
            usage,
            ...(ok ? {} : { error }),
          }),
        );
        recordBrainStep(
          {
            channel: route.channel,
            brainName: route.brainName,
            calls,
            usage,
            ok,
            ...(ok ? {} : { error }),
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
      };
      let produced: { replies: PendingReply[]; turns: Answered["turns"] };
      try {
        produced = await steps.produce(
          route,
          current.message,
          hooks.firstSequence,
          (call) => calls.push(call),
          (brain, tokens) => usage.push({ brain, ...tokens }),
        );
      } catch (error) {
        brainStep(false, error);
        return failure(route, current, error, attemptAt);
      }
      brainStep(true);
      const { replies, turns } = produced;
      const answered = { message: current.message, replies, delivered: 0, attempts: 0 };
      const madeAt = clock.now();
      if (replies.length > 0 || turns.length > 0) {
        const saved = await save(hooks, answered, { turns });
        if (saved === FENCED) return { kind: "fenced", job: current };
        // Not stored: neither the numbers nor the turns were taken, so the retry asks the
        // brain again from the job as it was, and its replies take the same numbers.
        if (saved !== undefined) return failure(route, current, saved, attemptAt);
      }
      // Only replies stored are recorded: a retry after a failed save makes others.
      if (replies.length > 0) hooks.record?.(replyEvents(replies, madeAt, keepText));
      current = answered;
    }
    if (current.renumber === true) {
      const attemptAt = clock.now();
      const renumbered = steps.renumber(current, hooks.firstSequence);
      const saved = await save(hooks, renumbered, { turns: [] });
      if (saved === FENCED) return { kind: "fenced", job: current };
      if (saved !== undefined) return failure(route, current, saved, attemptAt);
      // The timeline says which numbers the replies not yet delivered took in the lane now.
      const moved = (renumbered.replies ?? []).slice(renumbered.delivered);
      if (moved.length > 0) hooks.record?.(replyEvents(moved, clock.now(), keepText));
      current = renumbered;
    }
    const replies = current.replies ?? [];
    if (admission === "wait" && current.delivered < replies.length) return hold(route, current);
    let answered = false;
    while (current.delivered < replies.length) {
      const reply = replies[current.delivered];
      if (reply === undefined) break;
      // Once a POST of this run was answered, that answer is the receiver's latest word: the run
      // goes on, and a failure after it is reported as such (`answeredBefore`).
      if (admission === "send" && !answered && hooks.receiverDown?.() === true) return hold(route, current);
      const attemptAt = clock.now();
      // Each POST on the routes of its moment: a reload during the brain's call (seconds, for a
      // model) moves the reply to the new outbound settings, as it does a retry.
      const target = routes().get(job.message.channel) ?? route;
      let status: number;
      try {
        status = await steps.post(target, reply, current.message.trace);
      } catch (thrown) {
        const error = toChannelError(thrown);
        hooks.record?.([attemptEvent(reply, attemptAt, clock.now(), error)]);
        // After an answer of this run the receiver is up, whatever the run was admitted as.
        if (isReceiverFailure(error)) return unanswered(target, current, error, attemptAt, admission, answered);
        return { ...failure(target, current, error, attemptAt), answered: true };
      }
      answered = true;
      hooks.record?.([attemptEvent(reply, attemptAt, clock.now(), undefined, status)]);
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
        const saved = await save(hooks, current);
        if (saved === FENCED) return { kind: "fenced", job: current };
        if (saved !== undefined) return { ...failure(route, current, saved, attemptAt), answered: true };
      }
    }
    metrics.endToEnd(route.channel, (clock.now() - current.message.receivedAt) / 1000);
    return answered ? { kind: "done", job: current, answered } : { kind: "done", job: current };
  };

  return { run };
}

/** What {@link save} answers when the lane refused the write: the run stops. */
const FENCED = "fenced";

/**
 * Stores a step through the hooks; returns its failure, as a retryable error, instead of
 * throwing, or {@link FENCED} when the lane refused it.
 */
async function save(hooks: RunHooks, job: Job, answered?: Answered): Promise<ChannelError | typeof FENCED | undefined> {
  try {
    await hooks.save(job, answered);
    return undefined;
  } catch (error) {
    if (isLaneFenced(error)) return FENCED;
    return new ChannelError("internal_error", `cannot save progress: ${errorMessage(error)}`, {
      retryable: true,
      cause: error,
    });
  }
}
