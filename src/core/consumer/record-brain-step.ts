import type { BrainCall } from "../brain/brain.js";
import type { TokenUsage } from "../brain/token-usage.js";
import { isChannelError } from "../channel-error.js";
import type { LogFields, Logger } from "../log/logger.js";
import type { Metrics } from "../metrics/metrics.js";

/** The tokens one call used, under the brain that made the call (a chain's fallback included). */
export interface BrainTokens extends TokenUsage {
  readonly brain: string;
}

/** One brain step of a job: what was asked, what the chain reported, how it ended. */
export interface BrainStep {
  readonly channel: string;
  /** The route's brain, by its name in the configuration. */
  readonly brainName: string;
  /** The calls a fallback chain reported, in order; empty for a brain without fallbacks. */
  readonly calls: readonly BrainCall[];
  /** The usage the brains reported, one entry per call that reported any, in order. */
  readonly usage: readonly BrainTokens[];
  /** True when the step produced its replies. */
  readonly ok: boolean;
  /** Why the step failed, when it did. */
  readonly error?: unknown;
  /** The whole step: memory, the calls and rendering. */
  readonly seconds: number;
  /** The job's log fields (channel, message and conversation ids, trace), built only for a line. */
  readonly fields: () => LogFields;
}

/**
 * Records a brain step: `brainCall` once per brain actually called (a call refused because its
 * brain was paused never reached it, so it is not counted), `brainTokens` once per call
 * that reported usage (and a `debug` line with the step's totals), and a `warn` line when a
 * chain's brain failed. A brain without fallbacks is one call taking the whole step, as before
 * chains existed. In a chain each failed call counts its own time and the last call (the one
 * that answered, or the last to fail) the rest of the step, so the times add up to the step.
 */
export function recordBrainStep(step: BrainStep, metrics: Metrics, logger: Logger): void {
  recordTokens(step, metrics, logger);
  const { calls, channel } = step;
  const last = calls.at(-1);
  if (last === undefined) {
    if (!notAsked(step.error)) metrics.brainCall(channel, step.brainName, step.ok, step.seconds);
    return;
  }
  let earlier = 0;
  for (const call of calls.slice(0, -1)) {
    if (!notAsked(call.error)) metrics.brainCall(channel, call.brain, call.error === undefined, call.seconds);
    earlier += call.seconds;
  }
  if (!notAsked(last.error)) {
    metrics.brainCall(channel, last.brain, step.ok && last.error === undefined, Math.max(0, step.seconds - earlier));
  }

  const failed = calls.flatMap((call) =>
    call.error === undefined ? [] : [{ ...call.error.logFields(), brain: call.brain, error: call.error.message }],
  );
  if (failed.length === 0) return;
  const names = failed.map((failure) => JSON.stringify(failure.brain)).join(", ");
  if (last.error === undefined) {
    logger.warn(`brain ${names} failed; fallback "${last.brain}" answered`, {
      ...step.fields(),
      brain: last.brain,
      failed,
    });
  } else if (calls.length > 1) {
    // The consumer's own line gives the error the retry policy sees (the primary's); this one
    // says that the fallbacks were asked and why each failed.
    logger.warn(`every brain of the chain failed: ${names}`, { ...step.fields(), brain: step.brainName, failed });
  }
}

/**
 * Counts each call's tokens under the brain that made it. The debug line gives the step's
 * totals, so one line per attempt at a message says what it cost; with several brains
 * reporting (a chain whose failed brain had answered with usage) it lists each.
 */
function recordTokens(step: BrainStep, metrics: Metrics, logger: Logger): void {
  const { usage } = step;
  if (usage.length === 0) return;
  let prompt = 0;
  let completion = 0;
  for (const call of usage) {
    metrics.brainTokens(step.channel, call.brain, call.prompt, call.completion);
    prompt += call.prompt;
    completion += call.completion;
  }
  if (!logger.enabled("debug")) return;
  const [only] = usage;
  logger.debug(`brain tokens: ${prompt} prompt, ${completion} completion`, {
    ...step.fields(),
    brain: usage.length === 1 && only !== undefined ? only.brain : step.brainName,
    prompt_tokens: prompt,
    completion_tokens: completion,
    ...(usage.length === 1
      ? {}
      : {
          by_brain: usage.map((call) => ({
            brain: call.brain,
            prompt_tokens: call.prompt,
            completion_tokens: call.completion,
          })),
        }),
  });
}

/** True for the refusal of a paused brain's limiter: the brain was not asked. */
function notAsked(error: unknown): boolean {
  return isChannelError(error) && error.pausedUntil !== undefined;
}
