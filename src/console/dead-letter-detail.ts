import type { DeadLetterItem } from "../core/admin/dead-letter-item.js";
import { api, describe } from "./admin-api.js";
import { state } from "./console-state.js";
import { byId, type Child, el, scrollBox } from "./dom.js";
import { timeEl } from "./format-time.js";
import { foundHash } from "./message-links.js";
import { notify } from "./notice.js";
import { signOut } from "./sign-out.js";

/** A dead letter's error in a line: code, HTTP status if any, message. */
export function errorText(error: DeadLetterItem["error"]): string {
  return `${error.code}${error.status === null ? "" : ` (HTTP ${error.status})`}: ${error.message}`;
}

/** One term of a description list; "none" for no value. */
export function field(list: HTMLElement, name: string, value: Child | null | undefined): void {
  list.append(el("dt", { text: name }), el("dd", {}, [value === null || value === undefined ? "none" : value]));
}

function replyRow(reply: DeadLetterItem["replies"][number]): HTMLTableRowElement {
  const body = typeof reply.body === "string" ? reply.body : JSON.stringify(reply.body, null, 2);
  return el("tr", {}, [
    el("td", { className: "num", text: String(reply.sequence) }),
    el("td", { text: reply.delivered ? "yes" : "no: posted again on replay" }),
    el("td", {}, [el("code", { text: reply.id })]),
    el("td", {}, [el("pre", { text: body })]),
  ]);
}

function letterPath(id: string): string {
  return `/admin/dead-letters/${encodeURIComponent(id)}`;
}

/** Opens one dead letter: its message, error and every reply, the undelivered ones marked. */
export async function showDetail(id: string): Promise<void> {
  const answer = await api("GET", letterPath(id));
  if (answer.status === 401) {
    signOut(`Signed out: the API answered ${describe(answer)}`);
    return;
  }
  if (!answer.ok) {
    notify(`Could not show ${id}: the API answered ${describe(answer)}`, true);
    return;
  }
  const item = answer.data as DeadLetterItem;
  state.detail = item;
  byId("detail-title", HTMLHeadingElement).textContent = `Dead letter ${item.id}`;
  const list = byId("detail-fields", HTMLDListElement);
  const { message } = item;
  list.replaceChildren();
  field(list, "Channel", item.channel);
  field(list, "Conversation", el("code", { text: item.conversation_id }));
  const messageId = el("code", { text: item.message_id });
  // With the timeline off a link to the message would only lead to a 404.
  field(
    list,
    "Message id",
    state.timelineOff === null ? el("a", { href: foundHash("message", item.message_id) }, [messageId]) : messageId,
  );
  field(list, "Failed at", timeEl(item.failed_at));
  field(
    list,
    "Stage",
    item.stage === "brain" ? "brain: the brain never answered" : "reply: a reply could not be delivered",
  );
  field(list, "Attempts", String(item.attempts));
  field(list, "Error", errorText(item.error));
  field(list, "Sender", message.sender_id + (message.sender_name === null ? "" : ` (${message.sender_name})`));
  field(list, "Text", message.text);
  field(
    list,
    "Media",
    message.media_url === null
      ? null
      : message.media_url + (message.media_type === null ? "" : ` (${message.media_type})`),
  );
  field(list, "Received at", timeEl(message.received_at));
  field(list, "Idempotency-Key", message.idempotency_key);
  const replies = byId("detail-replies", HTMLTableElement);
  replies.tBodies[0]?.replaceChildren(...item.replies.map(replyRow));
  byId("detail-replies-empty", HTMLParagraphElement).hidden = item.replies.length > 0;
  scrollBox(replies).hidden = item.replies.length === 0;
  byId("detail", HTMLElement).hidden = false;
  byId("detail-title", HTMLHeadingElement).focus();
}

/** Closes the detail, giving the focus back to the letter's Show button (or the list's title). */
export function closeDetail(): void {
  const item = state.detail;
  state.detail = null;
  byId("detail", HTMLElement).hidden = true;
  const show = item === null ? null : document.querySelector<HTMLElement>(`[data-key="show:${CSS.escape(item.id)}"]`);
  (show ?? byId("dead-letters-title", HTMLHeadingElement)).focus();
}

/**
 * Checks, as the live parts refresh, that the letter open in the detail is still there: once it
 * is gone (replayed or deleted from elsewhere) the detail closes and says so, instead of offering
 * actions that can only fail.
 */
export async function refreshDetail(): Promise<void> {
  const item = state.detail;
  if (item === null) return;
  const answer = await api("GET", letterPath(item.id));
  if (state.detail !== item) return;
  if (answer.status === 401) {
    signOut(`Signed out: the API answered ${describe(answer)}`);
    return;
  }
  if (answer.status === 404) {
    const detail = byId("detail", HTMLElement);
    const focused = detail.contains(document.activeElement);
    state.detail = null;
    detail.hidden = true;
    notify(`Dead letter ${item.id} is no longer there: it was replayed or deleted.`);
    if (focused) byId("dead-letters-title", HTMLHeadingElement).focus();
    return;
  }
  if (!answer.ok) throw new Error(`checking the dead letter shown answered ${describe(answer)}`);
}
