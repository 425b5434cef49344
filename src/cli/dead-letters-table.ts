export { type DeadLetterItem, deadLetterItem } from "../core/admin/dead-letter-item.js";

import type { DeadLetterItem } from "../core/admin/dead-letter-item.js";

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

/**
 * Conversation ids and the like come from clients: control characters are escaped so that
 * a crafted id cannot move the cursor or recolour the operator's terminal.
 */
function printable(text: string): string {
  let out = "";
  for (const char of text) {
    const code = char.charCodeAt(0);
    out += code < 0x20 || (code >= 0x7f && code <= 0x9f) ? `\\u${code.toString(16).padStart(4, "0")}` : char;
  }
  return out;
}

function shorten(text: string, max: number): string {
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}
