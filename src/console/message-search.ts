import { addressableId } from "../core/admin/addressable-id.js";
import { type ApiAnswer, api } from "./admin-api.js";
import { state } from "./console-state.js";
import { showDetail } from "./dead-letter-detail.js";
import { byId } from "./dom.js";
import {
  conversationPath,
  focusFound,
  messagePath,
  NO_MESSAGE,
  prepare,
  showConversation,
  showDetailLine,
  showFailure,
  showTimeline,
  signedOut,
  timelineOffSentence,
} from "./found-view.js";
import { type FoundKind, foundHash, parseFoundHash } from "./message-links.js";
import type { MessagePage } from "./timeline-types.js";

/** What looking an id up found: a conversation, a message, nothing (with the answers why), or a sign-out. */
type Outcome =
  | { readonly kind: "conversation"; readonly id: string; readonly answer: ApiAnswer }
  | { readonly kind: "message"; readonly id: string; readonly answer: ApiAnswer }
  | { readonly kind: "none"; readonly id: string; readonly list: ApiAnswer; readonly one: ApiAnswer | null }
  | { readonly kind: "signed-out" };

/** Starts a lookup: from now on, the answers to every earlier one are dropped. */
function nextLookup(): number {
  state.lookups += 1;
  return state.lookups;
}

/**
 * Looks `id` up: a conversation with messages kept first, since its list answers 200 even when
 * empty, while an unknown message is a 404; then a message.
 */
async function lookUp(id: string): Promise<Outcome> {
  const list = await api("GET", conversationPath(id, null));
  if (signedOut(list)) return { kind: "signed-out" };
  if (list.ok && (list.data as MessagePage).items.length > 0) return { kind: "conversation", id, answer: list };
  if (!addressableId(id)) return { kind: "none", id, list, one: null };
  const one = await api("GET", messagePath(id));
  if (signedOut(one)) return { kind: "signed-out" };
  if (one.ok) return { kind: "message", id, answer: one };
  return { kind: "none", id, list, one };
}

/**
 * Finds what the search box holds: a conversation with messages kept lists them; otherwise it
 * is taken for a message id. The text is looked up as typed, since an id may begin or end with
 * spaces; only when that finds nothing is it tried again without them (a copied id often brings
 * some). Whatever it shows, found or not, the address then names.
 */
export async function search(query: string): Promise<void> {
  if (query.trim() === "") return;
  const lookup = nextLookup();
  let outcome = await lookUp(query);
  if (lookup !== state.lookups) return;
  if (outcome.kind === "none" && query.trim() !== query) {
    const trimmed = await lookUp(query.trim());
    if (lookup !== state.lookups) return;
    if (trimmed.kind !== "none") outcome = trimmed;
  }
  if (outcome.kind === "signed-out") return;
  if (outcome.kind === "conversation") showConversation(outcome.id, outcome.answer);
  else if (outcome.kind === "message") showTimeline(outcome.id, outcome.answer);
  else showNothing(outcome.id, outcome.list, outcome.one);
  remember(outcome.kind === "conversation" ? "conversation" : "message", outcome.id);
  focusFound();
}

/** Says that a search found nothing, or why it could not tell. */
function showNothing(id: string, list: ApiAnswer, one: ApiAnswer | null): void {
  if (list.ok && (one === null || one.status === 404)) {
    prepare("message", id, NO_MESSAGE, "empty");
    showDetailLine("No conversation with that id has messages kept either.");
  } else {
    showFailure("message", id, list.ok ? (one ?? list) : list);
  }
}

/** Records what is shown in the address, so that Back returns to it and the address can be shared. */
function remember(kind: FoundKind, id: string): void {
  const hash = foundHash(kind, id);
  if (location.hash !== hash) history.pushState(null, "", hash);
}

/** Opens what a link or the address names: a message's timeline or a conversation's messages. */
export async function openFound(kind: FoundKind, id: string): Promise<void> {
  const lookup = nextLookup();
  if (state.timelineOff !== null) {
    prepare(kind, id, timelineOffSentence(state.timelineOff), "error");
  } else if (kind === "message" && !addressableId(id)) {
    prepare(kind, id, NO_MESSAGE, "empty");
  } else {
    const answer = await api("GET", kind === "message" ? messagePath(id) : conversationPath(id, null));
    if (lookup !== state.lookups || signedOut(answer)) return;
    if (!answer.ok) showFailure(kind, id, answer);
    else if (kind === "message") showTimeline(id, answer);
    else showConversation(id, answer);
  }
  focusFound();
}

/** Shows what the address's fragment names, or nothing when it names nothing; on sign-in, and on Back and links. */
export async function route(): Promise<void> {
  const wanted = parseFoundHash(location.hash);
  if (wanted === undefined) {
    // Back to the plain address closes what was found, as its Close button does (the skip
    // link's #main does not).
    if (location.hash === "" || location.hash === "#") hideFound();
    return;
  }
  if (state.found?.kind === wanted.kind && state.found.id === wanted.id && !byId("found", HTMLElement).hidden) return;
  await openFound(wanted.kind, wanted.id);
}

function hideFound(): void {
  nextLookup();
  state.found = null;
  byId("found", HTMLElement).hidden = true;
}

/** Closes the found part and forgets it in the address; the focus goes back to the search box. */
export function closeFound(): void {
  hideFound();
  if (location.hash !== "") history.pushState(null, "", location.pathname + location.search);
  byId("search-id", HTMLInputElement).focus();
}

/** Opens the dead letter of the message whose timeline is shown. */
export function showFoundDeadLetter(): Promise<void> {
  const found = state.found;
  return found === null ? Promise.resolve() : showDetail(found.id);
}
