import type { BrainStatus, ChannelStatus, StatusReport } from "../core/admin/status-report.js";
import { renderLetterCount, syncChannelOptions } from "./channel-filter.js";
import { state } from "./console-state.js";
import { byId, el, scrollBox } from "./dom.js";
import { duration, timeEl } from "./format-time.js";

/** How often the live parts are asked again. */
export const REFRESH_MS = 3000;

// A value the runtime does not have shows as "n/a", never as 0.
function notAvailable(): HTMLElement {
  return el("abbr", { title: "Not available on this runtime: see the list below", text: "n/a" });
}

function numberCell(value: number | null | undefined): HTMLTableCellElement {
  return el("td", { className: "num" }, [value === null || value === undefined ? notAvailable() : String(value)]);
}

function receiverCell(receiver: ChannelStatus["receiver"]): HTMLTableCellElement {
  if (receiver === null) return el("td", {}, [notAvailable()]);
  if (receiver.up) return el("td", { className: "state-up", text: "up" });
  return el("td", { className: "state-down" }, [
    "down since ",
    timeEl(receiver.since),
    "; next try ",
    timeEl(receiver.next_probe_at),
  ]);
}

function pendingCell(queue: ChannelStatus["queue"], now: number): HTMLTableCellElement {
  if (queue === null) return el("td", {}, [notAvailable()]);
  if (queue.oldest_pending_at === null) return el("td", { text: "none pending" });
  const age = duration(now - Date.parse(queue.oldest_pending_at));
  return el("td", {}, [timeEl(queue.oldest_pending_at), ` (${age} ago)`]);
}

function channelRow(channel: ChannelStatus, now: number): HTMLTableRowElement {
  const { counts, queue } = channel;
  return el("tr", {}, [
    el("th", { scope: "row", text: channel.channel }),
    numberCell(counts?.accepted),
    numberCell(counts?.delivered),
    numberCell(counts?.retrying),
    numberCell(counts?.dead_lettered),
    queue === null
      ? el("td", { className: "num" }, [notAvailable()])
      : el("td", { className: "num", text: `${queue.depth} / ${queue.capacity}` }),
    pendingCell(queue, now),
    receiverCell(channel.receiver),
    numberCell(channel.receiver === null ? null : channel.receiver.waiting),
  ]);
}

/** The end first: it says when calls go through again; the start only how long it has lasted. */
function pausedCell(brain: BrainStatus): HTMLTableCellElement {
  if (!brain.paused) return el("td", { text: "no" });
  // A pause reported without its end (the status field is null then) still shows its start.
  if (brain.paused_until === null) {
    return el("td", { className: "state-down" }, ["paused since ", timeEl(brain.paused_since)]);
  }
  return el("td", { className: "state-down" }, [
    "paused until ",
    timeEl(brain.paused_until),
    " (since ",
    timeEl(brain.paused_since),
    ")",
  ]);
}

function brainRow(brain: BrainStatus): HTMLTableRowElement {
  return el("tr", {}, [el("th", { scope: "row", text: brain.brain }), numberCell(brain.in_flight), pausedCell(brain)]);
}

function renderBrains(brains: StatusReport["brains"]): void {
  const table = byId("brains", HTMLTableElement);
  const empty = byId("brains-empty", HTMLParagraphElement);
  if (brains === null) {
    empty.textContent = "Not available on this runtime: see the list below.";
  } else if (brains.length === 0) {
    empty.textContent =
      "No brain that calls out is in use (echo answers itself), so there are no calls to count or pause.";
  } else {
    empty.textContent = "";
  }
  empty.hidden = empty.textContent === "";
  scrollBox(table).hidden = !empty.hidden;
  table.tBodies[0]?.replaceChildren(...(brains ?? []).map(brainRow));
}

/** Draws `GET /admin/status`: a row per channel, a row per brain, and what the runtime cannot show, in words. */
export function renderStatus(report: StatusReport): void {
  const now = Date.parse(report.generated_at);
  let rows = report.channels.map((channel) => channelRow(channel, now));
  if (rows.length === 0) {
    rows = [el("tr", {}, [el("td", { colspan: 9, className: "empty", text: "No channels are configured." })])];
  }
  byId("channels", HTMLTableElement).tBodies[0]?.replaceChildren(...rows);
  renderBrains(report.brains);

  byId("unavailable", HTMLUListElement).replaceChildren(...report.not_available.map((text) => el("li", { text })));
  byId("unavailable-section", HTMLElement).hidden = report.not_available.length === 0;

  state.deadLetterTotal = report.dead_letters;
  renderLetterCount();
  syncChannelOptions(report.channels.map((channel) => channel.channel));

  const on = report.replica === undefined ? report.runtime : `${report.runtime}, replica ${report.replica}`;
  const line = byId("refresh-state", HTMLParagraphElement);
  const children: (Node | string)[] = [
    "Updated ",
    timeEl(report.generated_at),
    `, every ${REFRESH_MS / 1000} s, on ${on}.`,
  ];
  if (report.counting_since !== null) children.push(" Counts since ", timeEl(report.counting_since), ".");
  line.replaceChildren(...children);
}
