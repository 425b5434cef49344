import type { BrainCall } from "../brain/brain.js";
import { type ChannelError, toChannelError } from "../channel-error.js";
import type { PendingReply } from "../lifecycle/job.js";
import type { AttemptEvent, BrainCallEvent, ReplyEvent } from "../timeline/timeline-event.js";
import type { BrainTokens } from "./record-brain-step.js";

/** What one brain step did, as the job runner saw it. */
export interface BrainStepFacts {
  /** The route's brain. */
  readonly brain: string;
  /** When the step began (epoch ms) and how long it took. */
  readonly at: number;
  readonly durationMs: number;
  /** The calls a fallback chain reported; empty for a brain without fallbacks. */
  readonly calls: readonly BrainCall[];
  readonly usage: readonly BrainTokens[];
  /** Why the step failed, when it did. */
  readonly error?: unknown;
}

/**
 * The timeline's events of one brain step: one per brain asked, in order, each after the one
 * before it; a brain without fallbacks is one call taking the whole step.
 */
export function brainCallEvents(step: BrainStepFacts): BrainCallEvent[] {
  const failed = step.error === undefined ? undefined : toChannelError(step.error);
  const calls: readonly BrainCall[] =
    step.calls.length > 0
      ? step.calls
      : [{ brain: step.brain, seconds: step.durationMs / 1000, ...(failed === undefined ? {} : { error: failed }) }];
  let at = step.at;
  return calls.map((call, index) => {
    const durationMs = Math.round(call.seconds * 1000);
    const event: BrainCallEvent = {
      type: "brain_call",
      at,
      brain: call.brain,
      fallback: index > 0,
      ok: call.error === undefined,
      duration_ms: durationMs,
      ...errorFields(call.error),
      ...(call.error?.pausedUntil === undefined ? {} : { paused: true }),
      ...tokensOf(step.usage, call.brain),
    };
    at += durationMs;
    return event;
  });
}

/** The timeline's events of the replies a brain step made; `body` kept only when asked. */
export function replyEvents(replies: readonly PendingReply[], at: number, keepText: boolean): ReplyEvent[] {
  return replies.map((reply) => ({
    type: "reply",
    at,
    reply_id: reply.id,
    sequence: reply.sequence,
    ...(keepText ? { text: reply.body } : {}),
  }));
}

/** The timeline's event of one POST of `reply`, begun at `at`: its failure, or the status it got. */
export function attemptEvent(
  reply: PendingReply,
  at: number,
  now: number,
  error?: ChannelError,
  status?: number,
): AttemptEvent {
  return {
    type: "attempt",
    at,
    reply_id: reply.id,
    sequence: reply.sequence,
    ok: error === undefined,
    duration_ms: now - at,
    ...(status === undefined ? {} : { status }),
    ...errorFields(error),
  };
}

function errorFields(error: ChannelError | undefined): { error_code?: string; error?: string; status?: number } {
  if (error === undefined) return {};
  return {
    error_code: error.code,
    error: error.message,
    ...(error.upstreamStatus === undefined ? {} : { status: error.upstreamStatus }),
  };
}

function tokensOf(usage: readonly BrainTokens[], brain: string): Pick<BrainCallEvent, "tokens"> {
  const used = usage.filter((tokens) => tokens.brain === brain);
  if (used.length === 0) return {};
  let input = 0;
  let output = 0;
  for (const tokens of used) {
    input += tokens.prompt;
    output += tokens.completion;
  }
  return { tokens: { input, output } };
}
