import { api, describe } from "./admin-api.js";
import { type FoundView, state } from "./console-state.js";
import { renderConversation } from "./conversation-list.js";
import { byId } from "./dom.js";
import { conversationPath, focusFound, messagePath, showConversation, showFailure, signedOut } from "./found-view.js";
import { renderTimeline } from "./message-timeline.js";
import { errorMessage } from "./notice.js";
import type { MessagePage, MessageTimeline } from "./timeline-types.js";

/** The list whose next page is being fetched: a second press meanwhile would fetch the same page twice. */
let fetchingMore: FoundView | null = null;

/**
 * Adds the conversation's next page below the messages shown. A failure keeps the list and the
 * button, says so in the state line, and the button tries again.
 */
export async function moreMessages(): Promise<void> {
  const found = state.found;
  if (found === null || found.kind !== "conversation" || found.cursor === null || fetchingMore === found) return;
  fetchingMore = found;
  let failure: string | undefined;
  try {
    const answer = await api("GET", conversationPath(found.id, found.cursor));
    if (state.found !== found || signedOut(answer)) return;
    if (answer.ok) {
      const page = answer.data as MessagePage;
      found.cursor = page.next_cursor;
      found.paged = true;
      renderConversation(found.id, page, true);
      return;
    }
    failure = `the API answered ${describe(answer)}`;
  } catch (error) {
    failure = `could not reach the service (${errorMessage(error)})`;
  } finally {
    fetchingMore = null;
  }
  if (state.found !== found) return;
  const line = byId("found-state", HTMLParagraphElement);
  line.className = "error";
  line.textContent = `Could not load older messages: ${failure.replace(/\.$/, "")}. The messages above stay; Show older messages tries again.`;
}

/**
 * Redraws an open timeline, or a conversation's first page, when it changed, as the live parts
 * refresh. A message the API no longer knows (a 404: past retention, or a restart without a
 * store) says so; a conversation with none kept any more says that. Another failure leaves
 * what is shown and is said in the refresh line. A list with older pages added stays as it is.
 */
export async function refreshFound(): Promise<void> {
  const found = state.found;
  if (found === null || found.text === "" || found.paged) return;
  const message = found.kind === "message";
  const answer = await api("GET", message ? messagePath(found.id) : conversationPath(found.id, null));
  // What is shown may have changed meanwhile: another search, or older messages added.
  if (state.found !== found || found.paged || signedOut(answer) || answer.text === found.text) return;
  // With the timeline off (a restart without it), a conversation's 404 says so too.
  if (answer.status === 404 && (message || state.timelineOff !== null)) {
    keepingFoundFocus(() => showFailure(found.kind, found.id, answer));
    return;
  }
  if (!answer.ok) throw new Error(`refreshing the ${found.kind} shown answered ${describe(answer)}`);
  found.text = answer.text;
  if (message) {
    renderTimeline(answer.data as MessageTimeline);
    return;
  }
  const page = answer.data as MessagePage;
  if (page.items.length === 0) {
    keepingFoundFocus(() => showConversation(found.id, answer));
    return;
  }
  found.cursor = page.next_cursor;
  renderConversation(found.id, page, false);
}

/** Redraws the found part; a focus inside a part now hidden goes to its title rather than be lost. */
function keepingFoundFocus(redraw: () => void): void {
  const part = byId("found", HTMLElement);
  const inside = part.contains(document.activeElement);
  redraw();
  if (!inside) return;
  const active = document.activeElement;
  if (!(active instanceof HTMLElement) || !part.contains(active) || active.closest("[hidden]") !== null) focusFound();
}
