export { type DeadLetterItem, deadLetterItem } from "../core/admin/dead-letter-item.js";

import type { DeadLetterItem } from "../core/admin/dead-letter-item.js";
import { printable, shorten } from "./printable-text.js";

const HEADINGS = ["ID", "CHANNEL", "CONVERSATION", "FAILED AT (UTC)", "ATTEMPTS", "STAGE", "ERROR"] as const;
/** Longest conversation id shown in full; the ids that replay takes are never shortened. */
const MAX_CONVERSATION = 32;

/** The table `dead-letters list` prints for people: a heading line and one line per letter. */
export function formatDeadLetterTable(items: readonly DeadLetterItem[]): string {
  if (items.length === 0) return "";
  const rows = items.map((item) => [
    printable(item.id),
    printable(item.channel),
    shorten(printable(item.conversation_id), MAX_CONVERSATION),
    // Whole seconds are enough to read; --json keeps the milliseconds.
    item.failed_at.replace(/\.\d{3}Z$/, "Z"),
    String(item.attempts),
    item.stage,
    item.error.status === null
      ? printable(item.error.code)
      : `${printable(item.error.code)} (HTTP ${item.error.status})`,
  ]);
  const widths = HEADINGS.map((heading, column) =>
    Math.max(heading.length, ...rows.map((row) => row[column]?.length ?? 0)),
  );
  const line = (cells: readonly string[]) =>
    cells.map((cell, column) => (column === cells.length - 1 ? cell : cell.padEnd(widths[column] ?? 0))).join("  ");
  return `${[line(HEADINGS), ...rows.map(line)].join("\n")}\n`;
}
