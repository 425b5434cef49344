import type { DeadLetterItem } from "../core/admin/dead-letter-item.js";
import { api, describe } from "./admin-api.js";
import { renderLetterCount } from "./channel-filter.js";
import { state } from "./console-state.js";
import { errorText, showDetail } from "./dead-letter-detail.js";
import { byId, el, keepingFocus, scrollBox } from "./dom.js";
import { timeEl } from "./format-time.js";
import { guarded } from "./guarded.js";
import { foundHash } from "./message-links.js";
import { signOut } from "./sign-out.js";

/** The dead letters shown: the oldest page of the chosen channel. */
export const PAGE_LIMIT = 100;

/** A page of `GET /admin/dead-letters`. */
interface DeadLetterPage {
  readonly items: readonly DeadLetterItem[];
  readonly next_cursor: string | null;
}

function letterRow(item: DeadLetterItem): HTMLTableRowElement {
  const box = el("input", {
    type: "checkbox",
    key: `select:${item.id}`,
    "aria-label": `Select the dead letter of conversation ${item.conversation_id} (${item.id})`,
  });
  box.checked = state.selected.has(item.id);
  box.addEventListener("change", () => {
    if (box.checked) state.selected.add(item.id);
    else state.selected.delete(item.id);
  });
  const show = el("button", {
    type: "button",
    key: `show:${item.id}`,
    text: "Show",
    "aria-label": `Show the dead letter ${item.id}`,
  });
  show.addEventListener(
    "click",
    guarded(() => showDetail(item.id)),
  );
  return el("tr", { "data-id": item.id }, [
    el("td", {}, [box]),
    el("td", { text: item.channel }),
    el("td", {}, [el("code", { text: item.conversation_id })]),
    el("td", {}, [timeEl(item.failed_at)]),
    el("td", { text: item.stage }),
    el("td", { text: errorText(item.error) }),
    el("td", { className: "num", text: String(item.attempts) }),
    // With the timeline off a link would only lead to a 404: the cell stays empty, the search says why.
    el(
      "td",
      {},
      state.timelineOff === null
        ? [
            el("a", {
              href: foundHash("message", item.message_id),
              key: `timeline:${item.id}`,
              text: "Timeline",
              "aria-label": `Timeline of message ${item.message_id}`,
            }),
          ]
        : [],
    ),
    el("td", {}, [show]),
  ]);
}

/**
 * Redraws the table only when the page changed, keeping the selection and the focused control.
 * Only the latest request draws: the answer to one sent before (a slow timer refresh, say) would
 * bring back a letter just replayed or list another channel.
 */
export async function refreshLetters(): Promise<void> {
  state.lettersAsked += 1;
  const asked = state.lettersAsked;
  const channel = state.channel;
  const query = `?limit=${PAGE_LIMIT}${channel === "" ? "" : `&channel=${encodeURIComponent(channel)}`}`;
  const answer = await api("GET", `/admin/dead-letters${query}`);
  if (asked !== state.lettersAsked) return;
  if (answer.status === 401) {
    signOut(`Signed out: the API answered ${describe(answer)}`);
    return;
  }
  if (!answer.ok) throw new Error(`listing dead letters answered ${describe(answer)}`);
  const key = `${channel}\n${state.timelineOff === null ? "" : "off"}\n${answer.text}`;
  if (key === state.letters) return;
  state.letters = key;
  const { items, next_cursor: nextCursor } = answer.data as DeadLetterPage;
  state.listed = { count: items.length, more: nextCursor !== null };
  renderLetterCount();
  const ids = new Set(items.map((item) => item.id));
  for (const id of state.selected) if (!ids.has(id)) state.selected.delete(id);
  const table = byId("dead-letters", HTMLTableElement);
  const body = table.tBodies[0];
  if (body === undefined) throw new Error("#dead-letters has no body");
  keepingFocus(body, byId("dead-letters-title", HTMLHeadingElement), () =>
    body.replaceChildren(...items.map(letterRow)),
  );
  const empty = byId("dead-letters-empty", HTMLParagraphElement);
  empty.textContent =
    items.length > 0
      ? ""
      : `No dead letters${channel === "" ? "" : ` on channel ${channel}`}: every message accepted so far was delivered, is still being tried, or was replayed or deleted.`;
  empty.hidden = items.length > 0;
  scrollBox(table).hidden = items.length === 0;
  const more = byId("dead-letters-more", HTMLParagraphElement);
  more.textContent =
    nextCursor === null
      ? ""
      : `Showing the oldest ${PAGE_LIMIT}. More follow once these are replayed or deleted; webhook-channel dead-letters list shows them all.`;
  more.hidden = nextCursor === null;
}
