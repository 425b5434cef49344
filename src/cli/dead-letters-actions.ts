import type { AdminDeadLetters } from "../core/admin/dead-letter-admin.js";
import type { DeadLetterItem } from "../core/admin/dead-letter-item.js";
import { isChannelError } from "../core/channel-error.js";
import type { CliIo } from "./cli-io.js";
import { formatDeadLetterTable } from "./dead-letters-table.js";
import { printableJson } from "./printable-text.js";

/** What one `dead-letters` invocation asks, once its options are checked. */
export interface DeadLettersRequest {
  readonly action: "list" | "show" | "replay" | "delete";
  readonly ids: readonly string[];
  readonly all: boolean;
  readonly json: boolean;
}

/** The largest page the admin API gives; `list` follows next_cursor to the end. */
const PAGE = 500;

/**
 * Runs a `dead-letters` action through the admin port: over HTTP with `--url`, or over the
 * state_dir for `show` and `delete`. With `--json` it prints what the API answers. Exit 0, or
 * 1 when an id was not found or nothing was acted on.
 */
export async function runDeadLettersAction(
  port: AdminDeadLetters,
  request: DeadLettersRequest,
  io: CliIo,
): Promise<number> {
  switch (request.action) {
    case "list": {
      const items: DeadLetterItem[] = [];
      let cursor: string | null = null;
      do {
        const page = await port.list({ limit: PAGE, ...(cursor === null ? {} : { cursor }) });
        items.push(...page.items);
        cursor = page.nextCursor;
      } while (cursor !== null);
      if (request.json) io.out(`${JSON.stringify({ items, next_cursor: null })}\n`);
      else io.out(formatDeadLetterTable(items));
      io.err(`${items.length} dead letter(s)\n`);
      return 0;
    }
    case "show": {
      const id = request.ids[0] ?? "";
      const item = await port.get(id);
      if (item === undefined) return missing(io, [id]);
      io.out(
        request.json ? `${JSON.stringify(item)}\n` : `${formatDeadLetterTable([item])}${printableJson(item, 2)}\n`,
      );
      return 0;
    }
    case "delete": {
      const gone: string[] = [];
      for (const id of request.ids) {
        if (await port.delete(id)) {
          gone.push(id);
          io.out(`deleted ${id}\n`);
        }
      }
      return missing(
        io,
        request.ids.filter((id) => !gone.includes(id)),
      );
    }
    case "replay": {
      if (request.all) {
        const replayed = await port.replay({});
        if (request.json) io.out(`${JSON.stringify({ replayed })}\n`);
        io.err(replayed === 0 ? "nothing re-queued\n" : `${replayed} re-queued\n`);
        return replayed === 0 ? 1 : 0;
      }
      const unknown: string[] = [];
      let replayed = 0;
      let left = 0;
      for (const id of request.ids) {
        const count = await port.replay({ ids: [id] }).catch((error: unknown) => {
          // A letter of a channel the configuration no longer has stays listed: name it, go on.
          if (!isChannelError(error) || error.code !== "channel_not_configured") throw error;
          io.err(`dead letter ${id}: ${error.message}\n`);
          left += 1;
          return undefined;
        });
        if (count === undefined) continue;
        if (count === 0) unknown.push(id);
        else {
          replayed += 1;
          if (!request.json) io.out(`replayed ${id}\n`);
        }
      }
      if (request.json) io.out(`${JSON.stringify({ replayed })}\n`);
      return Math.max(missing(io, unknown), left > 0 ? 1 : 0);
    }
  }
}

function missing(io: CliIo, ids: readonly string[]): number {
  for (const id of ids) io.err(`no dead letter with id ${id}\n`);
  return ids.length > 0 ? 1 : 0;
}
