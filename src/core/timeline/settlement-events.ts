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
      const paused = waitsForPausedBrain(runEvents);
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

/**
 * Whether a run's retry waits for a paused brain, from the run's events: its brain step failed
 * (a chain stops at its first answer, so a failed last call means every brain failed) and the
 * route's own brain met the pause, since a failed chain is ruled on that brain's error. A run
 * whose brain answered and that failed later (a POST, a save) spent an attempt.
 */
export function waitsForPausedBrain(events: readonly TimelineEvent[]): boolean {
  const last = lastBrainCall(events, () => true);
  return last?.ok === false && lastBrainCall(events, (call) => !call.fallback)?.paused === true;
}

function lastBrainCall(
  events: readonly TimelineEvent[],
  which: (call: BrainCallEvent) => boolean,
): BrainCallEvent | undefined {
  for (let index = events.length - 1; index >= 0; index -= 1) {
    const event = events[index];
    if (event?.type === "brain_call" && which(event)) return event;
  }
  return undefined;
}
