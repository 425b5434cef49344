import { type ApiAnswer, api, describe } from "./admin-api.js";
import { state } from "./console-state.js";
import { renderConversation } from "./conversation-list.js";
import { showDetail } from "./dead-letter-detail.js";
import { byId } from "./dom.js";
import { type FoundKind, foundHash, parseFoundHash } from "./message-links.js";
import { renderTimeline } from "./message-timeline.js";
import { signOut } from "./sign-out.js";
import type { MessagePage, MessageTimeline } from "./timeline-types.js";

/** How many of a conversation's messages a page shows. */
const PAGE_LIMIT = 50;
/** What a 404 of `GET /admin/messages/{id}` means. */
const NO_MESSAGE = "No message with that id — past retention or never accepted.";

function messagePath(id: string): string {
  return `/admin/messages/${encodeURIComponent(id)}`;
}

function conversationPath(id: string, cursor: string | null): string {
  const query = new URLSearchParams({ conversation_id: id, limit: String(PAGE_LIMIT) });
  if (cursor !== null) query.set("cursor", cursor);
  return `/admin/messages?${query.toString()}`;
}

/** A 401 signs out with the API's words; resolves whether it did. */
function signedOut(answer: ApiAnswer): boolean {
  if (answer.status !== 401) return false;
  signOut(`Signed out: the API answered ${describe(answer)}`);
  return true;
}

/** Shows the found part, empty, for `kind` and `id`, with `sentence` as its state. */
function prepare(kind: FoundKind, id: string, sentence: string, className = ""): void {
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

function showTimeline(id: string, answer: ApiAnswer): void {
  prepare("message", id, "");
  if (state.found !== null) state.found.text = answer.text;
  renderTimeline(answer.data as MessageTimeline);
}

function showConversation(id: string, answer: ApiAnswer): void {
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

/** A lookup that failed; a message's 404 in the words operators look for, with the API's own below. */
function showFailure(kind: FoundKind, id: string, answer: ApiAnswer): void {
  if (answer.status === 404 && kind === "message") {
    prepare(kind, id, NO_MESSAGE, "empty");
    showDetailLine(`The API answered ${describe(answer)}`);
  } else {
    prepare(kind, id, `Could not look it up: the API answered ${describe(answer)}`, "error");
  }
}

function showDetailLine(text: string): void {
  const line = byId("found-detail", HTMLParagraphElement);
  line.textContent = text;
  line.hidden = false;
}

/** Records what is shown in the address, so that Back returns to it and the address can be shared. */
function remember(kind: FoundKind, id: string): void {
  const hash = foundHash(kind, id);
  if (location.hash !== hash) history.pushState(null, "", hash);
}

function focusFound(): void {
  byId("found-title", HTMLHeadingElement).focus();
}

/** Opens what a link or the address names: a message's timeline or a conversation's messages. */
export async function openFound(kind: FoundKind, id: string): Promise<void> {
  const answer = await api("GET", kind === "message" ? messagePath(id) : conversationPath(id, null));
  if (signedOut(answer)) return;
  if (!answer.ok) showFailure(kind, id, answer);
  else if (kind === "message") showTimeline(id, answer);
  else showConversation(id, answer);
  focusFound();
}

/**
 * Finds what the search box holds: a conversation with messages kept lists them; otherwise it
 * is taken for a message id. The conversation is asked first because its list answers 200 even
 * when empty, while an unknown message is a 404.
 */
export async function search(query: string): Promise<void> {
  const id = query.trim();
  if (id === "") return;
  const list = await api("GET", conversationPath(id, null));
  if (signedOut(list)) return;
  if (list.ok && (list.data as MessagePage).items.length > 0) {
    showConversation(id, list);
    remember("conversation", id);
    focusFound();
    return;
  }
  const one = await api("GET", messagePath(id));
  if (signedOut(one)) return;
  if (one.ok) {
    showTimeline(id, one);
    remember("message", id);
  } else if (one.status === 404 && list.ok) {
    prepare("message", id, NO_MESSAGE, "empty");
    showDetailLine("No conversation with that id has messages kept either.");
  } else {
    showFailure("message", id, list.ok ? one : list);
  }
  focusFound();
}

/** Adds the conversation's next page below the messages shown. */
export async function moreMessages(): Promise<void> {
  const found = state.found;
  if (found === null || found.kind !== "conversation" || found.cursor === null) return;
  const answer = await api("GET", conversationPath(found.id, found.cursor));
  if (signedOut(answer)) return;
  if (!answer.ok) {
    prepare("conversation", found.id, `Could not load more: the API answered ${describe(answer)}`, "error");
    return;
  }
  const page = answer.data as MessagePage;
  found.cursor = page.next_cursor;
  found.paged = true;
  renderConversation(found.id, page, true);
}

/**
 * Redraws an open timeline, or a conversation's first page, when it changed, as the live parts
 * refresh; a failure leaves it as it was. A list with older pages added stays as it is.
 */
export async function refreshFound(): Promise<void> {
  const found = state.found;
  if (found === null || found.text === "" || found.paged) return;
  const message = found.kind === "message";
  const answer = await api("GET", message ? messagePath(found.id) : conversationPath(found.id, null));
  if (signedOut(answer) || !answer.ok || answer.text === found.text || state.found !== found) return;
  found.text = answer.text;
  if (message) {
    renderTimeline(answer.data as MessageTimeline);
    return;
  }
  const page = answer.data as MessagePage;
  if (page.items.length === 0) return;
  found.cursor = page.next_cursor;
  renderConversation(found.id, page, false);
}

/** Shows what the address's fragment names, or nothing when it names nothing; on sign-in, and on Back and links. */
export async function route(): Promise<void> {
  const wanted = parseFoundHash(location.hash);
  if (wanted === undefined) {
    // Back to the plain address closes what was found, as its Close button does (the skip
    // link's #main does not).
    if (location.hash === "" || location.hash === "#") {
      state.found = null;
      byId("found", HTMLElement).hidden = true;
    }
    return;
  }
  if (state.found?.kind === wanted.kind && state.found.id === wanted.id && !byId("found", HTMLElement).hidden) return;
  await openFound(wanted.kind, wanted.id);
}

/** Closes the found part and forgets it in the address; the focus goes back to the search box. */
export function closeFound(): void {
  state.found = null;
  byId("found", HTMLElement).hidden = true;
  if (location.hash !== "") history.pushState(null, "", location.pathname + location.search);
  byId("search-id", HTMLInputElement).focus();
}

/** Opens the dead letter of the message whose timeline is shown. */
export function showFoundDeadLetter(): Promise<void> {
  const found = state.found;
  return found === null ? Promise.resolve() : showDetail(found.id);
}
