import type { MessageStatus, Waiting } from "./timeline-types.js";

/** A message's status in words, and whether it went wrong (the words say it; the class only repeats it). */
export function statusWords(status: MessageStatus): { readonly text: string; readonly className: string } {
  switch (status) {
    case "accepted":
      return { text: "accepted, not answered yet", className: "" };
    case "retrying":
      return { text: "retrying", className: "state-down" };
    case "waiting":
      return { text: "waiting", className: "" };
    case "delivered":
      return { text: "delivered", className: "state-up" };
    case "dead_letter":
      return { text: "dead letter", className: "state-down" };
    case "replayed":
      return { text: "replayed from the dead letters", className: "" };
    default:
      return { text: String(status), className: "" };
  }
}

/** Why a message waits, in a sentence's words; the message it waits behind, if any, is named by the caller. */
export function waitingWords(waiting: Waiting): string {
  switch (waiting.reason) {
    case "in_progress":
      return "under way now: its brain call or a reply's POST";
    case "receiver_down":
      return "the receiver is down; its replies are posted again when it is back";
    case "brain_paused":
      return "the brain is paused (its server answered 429 or 503)";
    case "retry":
      return "waiting to try again after a failure";
    case "behind_message":
      return "behind an earlier message of its conversation";
    case "queued":
      return "queued: its turn has not come yet";
    default:
      return String(waiting.reason);
  }
}

/** A duration in milliseconds as a person reads it: "85 ms", "1.2 s", "2 min 5 s". */
export function millis(ms: number): string {
  if (ms < 1000) return `${Math.round(ms)} ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(1)} s`;
  const s = Math.round(ms / 1000);
  return `${Math.floor(s / 60)} min ${s % 60} s`;
}
