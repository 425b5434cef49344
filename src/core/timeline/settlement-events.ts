import type { Settlement } from "../lifecycle/settle-outcome.js";
import type { MessageStatus, SettledEvent, TimelineEvent } from "./timeline-event.js";

/**
 * The timeline's event for a settlement made at `now`, and the status it gives the message. A
 * retry after a call refused by a paused brain is waiting for the brain, not retrying.
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
      const paused = runEvents.some((event) => event.type === "brain_call" && event.paused === true);
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
