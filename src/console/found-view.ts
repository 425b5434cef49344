import { type ApiAnswer, describe } from "./admin-api.js";
import { state } from "./console-state.js";
import { renderConversation } from "./conversation-list.js";
import { byId } from "./dom.js";
import type { FoundKind } from "./message-links.js";
import { renderTimeline } from "./message-timeline.js";
import { signOut } from "./sign-out.js";
import type { MessagePage, MessageTimeline } from "./timeline-types.js";

/** How many of a conversation's messages a page shows. */
const PAGE_LIMIT = 50;
/** What a 404 of `GET /admin/messages/{id}` means. */
export const NO_MESSAGE = "No message with that id — past retention or never accepted.";

/** The path of one message's timeline; only for an id that `addressableId` takes. */
export function messagePath(id: string): string {
  return `/admin/messages/${encodeURIComponent(id)}`;
}

/** The path of a page of a conversation's messages, from `cursor` (null for the first). */
export function conversationPath(id: string, cursor: string | null): string {
  const query = new URLSearchParams({ conversation_id: id, limit: String(PAGE_LIMIT) });
  if (cursor !== null) query.set("cursor", cursor);
  return `/admin/messages?${query.toString()}`;
}

/** A 401 signs out with the API's words; resolves whether it did. */
export function signedOut(answer: ApiAnswer): boolean {
  if (answer.status !== 401) return false;
  signOut(`Signed out: the API answered ${describe(answer)}`);
  return true;
}

/** Shows the found part, empty, for `kind` and `id`, with `sentence` as its state. */
export function prepare(kind: FoundKind, id: string, sentence: string, className = ""): void {
  state.found = { kind, id, text: "", cursor: null, paged: false };
  byId("found-title", HTMLHeadingElement).textContent = kind === "message" ? `Message ${id}` : `Conversation ${id}`;
  const line = byId("found-state", HTMLParagraphElement);
  line.textContent = sentence;
  line.className = className;
  byId("found-detail", HTMLParagraphElement).hidden = true;
  byId("conversation", HTMLDivElement).hidden = true;
  byId("timeline", HTMLDivElement).hidden = true;
  byId("timeline-dead-letter", HTMLButtonElement).hidden = true;
  byId("found", HTMLElement).hidden = false;
}

/** Draws a message's timeline from a successful answer. */
export function showTimeline(id: string, answer: ApiAnswer): void {
  prepare("message", id, "");
  if (state.found !== null) state.found.text = answer.text;
  renderTimeline(answer.data as MessageTimeline);
}

/** Draws a conversation's first page from a successful answer, or says that none of its messages is kept. */
export function showConversation(id: string, answer: ApiAnswer): void {
  const page = answer.data as MessagePage;
  prepare("conversation", id, "");
  if (state.found !== null) {
    state.found.text = answer.text;
    state.found.cursor = page.next_cursor;
  }
  if (page.items.length === 0) {
    byId("found-state", HTMLParagraphElement).className = "empty";
    byId("found-state", HTMLParagraphElement).textContent =
      "No messages of this conversation are kept — past retention or none accepted.";
    return;
  }
  renderConversation(id, page, false);
}

/** What the found part says when the service keeps no timeline: `words` is the API's 404. */
export function timelineOffSentence(words: string): string {
  return `Not shown: this service keeps no message timeline; the API answered ${words}`;
}

/**
 * A lookup that failed; a message's 404 in the words operators look for, with the API's own
 * below. With the timeline off (a service restarted without it under an open timeline), a 404
 * says that instead of "no message".
 */
export function showFailure(kind: FoundKind, id: string, answer: ApiAnswer): void {
  if (answer.status === 404 && state.timelineOff !== null) {
    prepare(kind, id, timelineOffSentence(state.timelineOff), "error");
  } else if (answer.status === 404 && kind === "message") {
    prepare(kind, id, NO_MESSAGE, "empty");
    showDetailLine(`The API answered ${describe(answer)}`);
  } else {
    prepare(kind, id, `Could not look it up: the API answered ${describe(answer)}`, "error");
  }
}

/** The smaller line under the found part's state. */
export function showDetailLine(text: string): void {
  const line = byId("found-detail", HTMLParagraphElement);
  line.textContent = text;
  line.hidden = false;
}

/** Gives the focus to the found part's title. */
export function focusFound(): void {
  byId("found-title", HTMLHeadingElement).focus();
}
