import { byId, el, keepingFocus } from "./dom.js";
import { timeEl } from "./format-time.js";
import { foundHash } from "./message-links.js";
import { statusWords } from "./status-words.js";
import type { MessagePage, MessageSummary } from "./timeline-types.js";

function messageRow(item: MessageSummary): HTMLTableRowElement {
  const status = statusWords(item.status);
  return el("tr", { "data-id": item.message_id }, [
    el("td", {}, [timeEl(item.accepted_at)]),
    el("td", {}, [
      el(
        "a",
        {
          href: foundHash("message", item.message_id),
          key: `message:${item.message_id}`,
          "aria-label": `Timeline of message ${item.message_id}`,
        },
        [el("code", { text: item.message_id })],
      ),
    ]),
    el("td", { text: item.channel }),
    el("td", { className: status.className, text: status.text }),
    el("td", {}, [timeEl(item.updated_at)]),
  ]);
}

/**
 * Draws a page of a conversation's messages, newest first: the first page in place of what was
 * shown (a refresh keeps the focused link), or with `more` the next page below it.
 */
export function renderConversation(id: string, page: MessagePage, more: boolean): void {
  byId("found-title", HTMLHeadingElement).textContent = `Conversation ${id}`;
  const body = byId("conversation-messages", HTMLTableElement).tBodies[0];
  if (body === undefined) throw new Error("#conversation-messages has no body");
  const rows = page.items.map(messageRow);
  if (more) body.append(...rows);
  else keepingFocus(body, byId("found-title", HTMLHeadingElement), () => body.replaceChildren(...rows));
  const shown = body.rows.length;
  const line = byId("found-state", HTMLParagraphElement);
  line.className = "";
  line.textContent = `${shown} message${shown === 1 ? "" : "s"}, newest first${page.next_cursor === null ? "" : "; older ones follow"}. Each links to its timeline.`;
  byId("conversation-more", HTMLButtonElement).hidden = page.next_cursor === null;
  byId("conversation", HTMLDivElement).hidden = false;
}
