import type { TimelineAdmin } from "../core/timeline/timeline-admin.js";
import type { MessageSummaryView } from "../core/timeline/timeline-views.js";
import type { CliIo } from "./cli-io.js";
import { formatTimeline } from "./message-timeline-text.js";
import { type MessagesRequest, messagesCommand } from "./messages-request.js";
import { formatMessageTable } from "./messages-table.js";
import { printable } from "./printable-text.js";

/**
 * Runs `messages show` or `messages list` through the timeline port: over HTTP with `--url`,
 * over the state (SQLite or Postgres) with `--config`, printed alike. With `--json` it prints
 * what the admin API answers. Exit 0 when something was found, 1 when not.
 */
export async function runMessagesAction(
  port: TimelineAdmin,
  request: MessagesRequest,
  io: CliIo,
  /** The source options to repeat in the next page's command (`--url <u>`, `--config <f>`). */
  source: readonly string[],
): Promise<number> {
  if (request.action === "show") {
    const view = await port.get(request.id);
    if (view === undefined) {
      io.err(
        `no message with id ${printable(request.id)} in the timeline: it was never accepted by this service, it is older than the timeline keeps (timeline.retention_hours, timeline.max_messages), or it was accepted a moment ago and its first events are still being written\n`,
      );
      return 1;
    }
    io.out(request.json ? `${JSON.stringify(view)}\n` : formatTimeline(view));
    return 0;
  }
  const items: MessageSummaryView[] = [];
  let cursor = request.query.cursor ?? null;
  do {
    const page = await port.list({ ...request.query, cursor: cursor ?? undefined });
    items.push(...page.items);
    cursor = page.nextCursor;
  } while (request.all && cursor !== null);
  io.out(request.json ? `${JSON.stringify({ items, next_cursor: cursor })}\n` : formatMessageTable(items));
  if (items.length === 0) {
    io.err("no message matches\n");
    return 1;
  }
  const next =
    cursor === null ? "" : `; next page: ${messagesCommand(request, cursor, source)} (or --all for every page)`;
  io.err(`${items.length} message(s), newest first${next}\n`);
  return 0;
}
