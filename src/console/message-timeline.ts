import { field } from "./dead-letter-detail.js";
import { byId, type Child, el } from "./dom.js";
import { timeEl } from "./format-time.js";
import { foundHash } from "./message-links.js";
import { statusWords, waitingWords } from "./status-words.js";
import { eventItem } from "./timeline-events.js";
import type { MessageTimeline, Waiting } from "./timeline-types.js";

function waitingValue(waiting: Waiting): Child[] {
  const parts: Child[] = [waitingWords(waiting)];
  if (waiting.behind_message_id !== undefined) {
    const id = waiting.behind_message_id;
    parts.push(" (", el("a", { href: foundHash("message", id) }, [el("code", { text: id })]), ")");
  }
  if (waiting.until === undefined) return parts;
  if (waiting.reason === "receiver_down") parts.push(", or at ", timeEl(waiting.until), " at the latest");
  else if (waiting.reason === "retry" || waiting.reason === "brain_paused")
    parts.push("; next try at ", timeEl(waiting.until));
  else parts.push("; until ", timeEl(waiting.until));
  return parts;
}

/** Draws one message's timeline: where it stands, then every event, oldest first. */
export function renderTimeline(timeline: MessageTimeline): void {
  byId("found-title", HTMLHeadingElement).textContent = `Message ${timeline.message_id}`;
  const list = byId("timeline-fields", HTMLDListElement);
  list.replaceChildren();
  const status = statusWords(timeline.status);
  field(list, "Status", el("span", { className: status.className, text: status.text }));
  if (timeline.waiting !== undefined) field(list, "Waiting", el("span", {}, waitingValue(timeline.waiting)));
  field(list, "Channel", timeline.channel);
  field(
    list,
    "Conversation",
    el("a", { href: foundHash("conversation", timeline.conversation_id) }, [
      el("code", { text: timeline.conversation_id }),
    ]),
  );
  field(list, "Message id", el("code", { text: timeline.message_id }));
  field(list, "Accepted at", timeEl(timeline.accepted_at));
  field(list, "Last change", timeEl(timeline.updated_at));
  const events = byId("timeline-events", HTMLOListElement);
  events.replaceChildren(...timeline.events.map(eventItem));
  byId("timeline-dead-letter", HTMLButtonElement).hidden = timeline.status !== "dead_letter";
  byId("timeline", HTMLDivElement).hidden = false;
}
