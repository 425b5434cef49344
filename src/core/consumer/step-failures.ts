import type { ChannelError } from "../channel-error.js";
import { toChannelError } from "../channel-error.js";
import type { Clock } from "../clock.js";
import type { Job, JobError, JobOutcome, VerdictOutcome } from "../lifecycle/job.js";
import type { Logger } from "../log/logger.js";
import { redactUrl } from "../log/redact-url.js";
import type { Metrics } from "../metrics/metrics.js";
import type { Admission } from "../receiver/receiver-circuit.js";
import type { ChannelRoute } from "./channel-routes.js";
import { classifyFailure, type FailureVerdict, jobErrorOf } from "./classify-failure.js";

/** What the failure outcomes need. */
export interface StepFailureDeps {
  readonly clock: Clock;
  /** Uniform in [0, 1), for backoff jitter. */
  readonly random: () => number;
  readonly logger: Logger;
  readonly metrics: Metrics;
}

/** A failed attempt's verdict: another attempt, or a dead letter. */
export type FailedVerdict = Exclude<VerdictOutcome, { kind: "done" }>;

/**
 * What a step of a job that did not go through comes to, as outcomes of the job state machine
 * (`createJobRunner`): a failed attempt ({@link StepFailures.failure}), a reply POST the
 * receiver did not answer, for the receiver circuit to rule on ({@link StepFailures.unanswered}),
 * and replies held while the receiver is down ({@link StepFailures.hold}).
 */
export interface StepFailures {
  /** The verdict on a failed attempt, logged (a retry) and counted; dead letters are counted where they are stored. */
  failure(route: ChannelRoute, job: Job, thrown: unknown, attemptAt: number): FailedVerdict;
  /**
   * A reply POST the receiver did not answer: the verdict as for any failure, and the job as it
   * waits, uncounted, should the receiver circuit find the receiver down. The probe's own
   * failure is no news (the receiver is known to be down): it is logged at info, not as a retry.
   * `answeredBefore`: an earlier POST of the run was answered, so the receiver is up (the probe,
   * if it was one, succeeded) and this is an ordinary failure, which the outcome says.
   */
  unanswered(
    route: ChannelRoute,
    job: Job,
    error: ChannelError,
    attemptAt: number,
    admission: Admission,
    answeredBefore?: boolean,
  ): JobOutcome;
  /**
   * Replies held while the receiver is down: the job waits at no cost until `max_age_ms` after
   * its step began, and the run after that makes it a dead letter.
   */
  hold(route: ChannelRoute, job: Job): JobOutcome;
}

/** Builds the failure outcomes over a clock, jitter, a logger and metrics. */
export function createStepFailures(deps: StepFailureDeps): StepFailures {
  const { clock, logger, metrics, random } = deps;
  const judge = (route: ChannelRoute, job: Job, error: ChannelError, attemptAt: number): FailureVerdict =>
    classifyFailure({ job, error, attemptAt, now: clock.now(), policy: route.policy, jitter: random() });

  const logFields = (route: ChannelRoute, job: Job, error: ChannelError, attempts: number) => ({
    channel: job.message.channel,
    message_id: job.message.id,
    trace_id: job.message.trace?.traceId,
    conversation_id: job.message.message.conversationId,
    reply_id: job.replies?.[job.delivered]?.id,
    step: job.replies === undefined ? "brain" : "delivery",
    code: error.code,
    status: error.upstreamStatus,
    attempts,
    ...(job.replies === undefined ? {} : { url: redactUrl(route.url) }),
  });

  const failure = (
    route: ChannelRoute,
    job: Job,
    thrown: unknown,
    attemptAt: number,
  ): Exclude<VerdictOutcome, { kind: "done" }> => {
    const error = toChannelError(thrown);
    const verdict = judge(route, job, error, attemptAt);
    const fields = logFields(route, job, error, verdict.job.attempts);
    // The upstream's own words may quote the message: debug only, like message text.
    if (error.upstreamMessage !== undefined && logger.enabled("debug")) {
      logger.debug("the upstream said", { ...fields, upstream_message: error.upstreamMessage });
    }
    if (verdict.kind === "retry") {
      if (job.replies !== undefined) metrics.retry(job.message.channel);
      // A paused brain was not asked: its pause has a line of its own, not one per waiting message.
      if (error.pausedUntil !== undefined) logger.debug(`waiting for a paused brain: ${error.message}`, fields);
      else logger.warn(`attempt failed, retrying: ${error.message}`, { ...fields, retry_in_ms: verdict.delayMs });
      return verdict;
    }
    if (error.upstreamStatus === 410 && job.replies !== undefined) {
      logger.error("outbound_url answered 410 Gone: the receiver says it no longer exists", fields);
    }
    return { kind: "dead", job: verdict.job, error: verdict.error, reason: verdict.reason };
  };

  const unanswered = (
    route: ChannelRoute,
    job: Job,
    error: ChannelError,
    attemptAt: number,
    admission: Admission,
    answeredBefore = false,
  ): JobOutcome => {
    let verdict: Exclude<VerdictOutcome, { kind: "done" }>;
    if (admission === "probe" && !answeredBefore) {
      const judged = judge(route, job, error, attemptAt);
      verdict =
        judged.kind === "retry"
          ? judged
          : { kind: "dead", job: judged.job, error: judged.error, reason: judged.reason };
      logger.info(`receiver probe failed: ${error.message}`, logFields(route, job, error, job.attempts));
      // A failed POST tried again later, as any reply retry: the counter counts every such POST.
      if (judged.kind === "retry" && job.replies !== undefined) metrics.retry(job.message.channel);
    } else {
      verdict = failure(route, job, error, attemptAt);
    }
    const stepStartedAt = job.stepStartedAt ?? attemptAt;
    const held: Job = { ...job, stepStartedAt, lastError: verdict.job.lastError ?? jobErrorOf(error) };
    return {
      kind: "unanswered",
      job: held,
      until: stepStartedAt + route.policy.maxAgeMs,
      retryAfterMs: error.retryAfterMs,
      verdict,
      ...(answeredBefore ? { answeredBefore: true } : {}),
    };
  };

  const hold = (route: ChannelRoute, job: Job): JobOutcome => {
    const now = clock.now();
    const stepStartedAt = job.stepStartedAt ?? now;
    const until = stepStartedAt + route.policy.maxAgeMs;
    if (now < until) return { kind: "wait", job: { ...job, stepStartedAt }, until };
    const error: JobError = job.lastError ?? {
      code: "delivery_failed",
      message: `the receiver was down for longer than max_age_ms (${route.policy.maxAgeMs} ms)`,
      retryable: true,
    };
    return { kind: "dead", job: { ...job, lastError: error }, error, reason: "max_age" };
  };

  return { failure, unanswered, hold };
}

/**
 * A reply POST that got no answer from the receiver (no connection, a timeout, 5xx, 408, 425,
 * 429): the receiver circuit counts it. A 409 is retried but is an answer: the receiver is up.
 */
export function isReceiverFailure(error: ChannelError): boolean {
  return error.code === "delivery_failed" && error.retryable && error.upstreamStatus !== 409;
}
