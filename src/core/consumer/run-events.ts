import type { BrainCall } from "../brain/brain.js";
import { isPausingError } from "../brain/limits/brain-pause.js";
import { type ChannelError, toChannelError } from "../channel-error.js";
import type { PendingReply } from "../lifecycle/job.js";
import type { Mutable } from "../mutable.js";
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
      : [
          failed === undefined
            ? { brain: step.brain, seconds: step.durationMs / 1000 }
            : { brain: step.brain, seconds: step.durationMs / 1000, error: failed },
        ];
  let at = step.at;
  return calls.map((call, index) => {
    const durationMs = Math.round(call.seconds * 1000);
    // Built field by field, in the order the API shows them: this runs for every message.
    const event: Mutable<BrainCallEvent> = {
      type: "brain_call",
      at,
      brain: call.brain,
      fallback: index > 0,
      ok: call.error === undefined,
      duration_ms: durationMs,
    };
    if (call.error !== undefined) addError(event, call.error);
    // Refused by a pause, or an answer (a 429 or 503) that paused the brain: either way the job
    // waits for the pause's end and spends no attempt.
    if (call.error !== undefined && (call.error.pausedUntil !== undefined || isPausingError(call.error))) {
      event.paused = true;
    }
    if (step.usage.length > 0) {
      const tokens = tokensOf(step.usage, call.brain);
      if (tokens !== undefined) event.tokens = tokens;
    }
    at += durationMs;
    return event;
  });
}

/** The timeline's events of the replies a brain step made; `body` kept only when asked. */
export function replyEvents(replies: readonly PendingReply[], at: number, keepText: boolean): ReplyEvent[] {
  return replies.map((reply) => {
    const event: Mutable<ReplyEvent> = { type: "reply", at, reply_id: reply.id, sequence: reply.sequence };
    if (keepText) event.text = reply.body;
    return event;
  });
}

/** The timeline's event of one POST of `reply`, begun at `at`: its failure, or the status it got. */
export function attemptEvent(
  reply: PendingReply,
  at: number,
  now: number,
  error?: ChannelError,
  status?: number,
): AttemptEvent {
  const event: Mutable<AttemptEvent> = {
    type: "attempt",
    at,
    reply_id: reply.id,
    sequence: reply.sequence,
    ok: error === undefined,
    duration_ms: now - at,
  };
  if (status !== undefined) event.status = status;
  if (error !== undefined) addError(event, error);
  return event;
}

/** Adds a failure's code, message and upstream status to `event`, after the fields it has. */
function addError(event: { error_code?: string; error?: string; status?: number }, error: ChannelError): void {
  event.error_code = error.code;
  event.error = error.message;
  if (error.upstreamStatus !== undefined) event.status = error.upstreamStatus;
}

function tokensOf(usage: readonly BrainTokens[], brain: string): BrainCallEvent["tokens"] | undefined {
  let input = 0;
  let output = 0;
  let used = false;
  for (const tokens of usage) {
    if (tokens.brain !== brain) continue;
    used = true;
    input += tokens.prompt;
    output += tokens.completion;
  }
  return used ? { input, output } : undefined;
}
