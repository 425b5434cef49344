import type { Settlement } from "../lifecycle/settle-outcome.js";
import type { BrainCallEvent, MessageStatus, SettledEvent, TimelineEvent } from "./timeline-event.js";

/**
 * The timeline's event for a settlement made at `now`, and the status it gives the message. A
 * retry whose call to the route's brain met a pause (refused by it, or answered with the 429 or
 * 503 that began it) is waiting for the brain, not retrying.
 */
export function settlementEvent(
  settlement: Settlement,
  runEvents: readonly TimelineEvent[],
  now: number,
): { readonly event: SettledEvent; readonly status: MessageStatus } {
  switch (settlement.kind) {
    case "finish":
      return { event: { type: "delivered", at: now }, status: "delivered" };
    case "hold":
      return {
        event: { type: "waiting", at: now, reason: "receiver_down", until: settlement.until },
        status: "waiting",
      };
    case "bury": {
      const { error } = settlement.letter;
      return {
        event: { type: "dead_letter", at: now, error_code: error.code, error: error.message },
        status: "dead_letter",
      };
    }
    case "postpone": {
      const error = settlement.job.lastError;
      // The route's own brain decides: when a whole fallback chain fails, its error is the one
      // the retry is ruled on, whatever the fallbacks met.
      const paused = lastRouteBrainCall(runEvents)?.paused === true;
      return {
        event: {
          type: "retry",
          at: now,
          next_attempt_at: settlement.dueAt,
          error_code: error?.code ?? "state_unavailable",
          error: error?.message ?? "the job's progress could not be stored; it runs again from what is stored",
        },
        status: paused ? "waiting" : "retrying",
      };
    }
  }
}

/** The last call to the route's own brain (not a fallback) among `events`, if any. */
export function lastRouteBrainCall(events: readonly TimelineEvent[]): BrainCallEvent | undefined {
  for (let index = events.length - 1; index >= 0; index -= 1) {
    const event = events[index];
    if (event?.type === "brain_call" && !event.fallback) return event;
  }
  return undefined;
}
