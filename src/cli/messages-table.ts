import type { MessageSummaryView } from "../core/timeline/timeline-views.js";
import { printable, shorten } from "./printable-text.js";

const HEADINGS = ["MESSAGE ID", "CHANNEL", "CONVERSATION", "STATUS", "ACCEPTED (UTC)", "UPDATED (UTC)"] as const;
/** Longest conversation id shown in full; message ids, which `messages show` takes, are never shortened. */
const MAX_CONVERSATION = 32;

/** The table `messages list` prints for people: a heading line and one line per message, newest first. */
export function formatMessageTable(items: readonly MessageSummaryView[]): string {
  if (items.length === 0) return "";
  const rows = items.map((item) => [
    printable(item.message_id),
    printable(item.channel),
    shorten(printable(item.conversation_id), MAX_CONVERSATION),
    item.status,
    wholeSeconds(item.accepted_at),
    wholeSeconds(item.updated_at),
  ]);
  const widths = HEADINGS.map((heading, column) =>
    Math.max(heading.length, ...rows.map((row) => row[column]?.length ?? 0)),
  );
  const line = (cells: readonly string[]) =>
    cells.map((cell, column) => (column === cells.length - 1 ? cell : cell.padEnd(widths[column] ?? 0))).join("  ");
  return `${[line(HEADINGS), ...rows.map(line)].join("\n")}\n`;
}

/** Whole seconds are enough to find a message; `messages show` and --json keep the milliseconds. */
function wholeSeconds(iso: string): string {
  return iso.replace(/\.\d{3}Z$/, "Z");
}
