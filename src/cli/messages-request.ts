import { decodeCursor } from "../core/admin/dead-letter-cursor.js";
import { parseInstant } from "../core/admin/parse-instant.js";
import { shellWord } from "../core/shell-word.js";
import type { MessageQuery } from "../core/timeline/timeline-admin.js";
import { MESSAGE_STATUSES, type MessageStatus } from "../core/timeline/timeline-event.js";
import { CLI } from "./cli-help.js";
import { UsageError } from "./usage-error.js";

/** The largest page the admin API gives, and the page `--all` reads without `--limit`. */
export const MAX_PAGE = 500;
/** The API's page when `limit` is not given, and so the CLI's. */
const DEFAULT_PAGE = 100;

/** What one `messages` invocation asks, once its options are checked. */
export type MessagesRequest =
  | {
      readonly action: "show";
      readonly id: string;
      readonly json: boolean;
      /** The words after `messages`, without the source options, for the commands the CLI suggests. */
      readonly words: readonly string[];
    }
  | {
      readonly action: "list";
      readonly query: MessageQuery;
      /** Follow `next_cursor` to the last page. */
      readonly all: boolean;
      readonly json: boolean;
      /** As for `show`, and without `--cursor`, which {@link messagesCommand} adds. */
      readonly words: readonly string[];
    };

/** The options of `messages` as `parseArgs` gives them, source options aside. */
export interface MessagesOptions {
  readonly conversation?: string | undefined;
  readonly channel?: string | undefined;
  readonly status?: string | undefined;
  readonly since?: string | undefined;
  readonly limit?: string | undefined;
  readonly cursor?: string | undefined;
  readonly all: boolean;
  readonly json: boolean;
}

/** The options only `messages list` takes, in the order its help gives them. */
const LIST_ONLY = ["conversation", "channel", "status", "since", "limit", "cursor", "all"] as const;

/**
 * Checks `messages show <id>` and `messages list [filters]` and says, as a {@link UsageError}
 * naming the flag and what it takes, what is wrong, before any source is opened.
 */
export function messagesRequest(
  action: "show" | "list",
  options: MessagesOptions,
  positionals: readonly string[],
): MessagesRequest {
  const given = LIST_ONLY.filter((name) => (name === "all" ? options.all : options[name] !== undefined));
  if (action === "show") {
    const [id, ...extra] = positionals;
    if (id === undefined || id === "" || extra.length > 0) {
      throw new UsageError("show needs one message id: messages show <id>");
    }
    const [listOnly] = given;
    if (listOnly !== undefined) throw new UsageError(`--${listOnly} is for messages list`);
    return { action, id, json: options.json, words: ["show", shellWord(id), ...(options.json ? ["--json"] : [])] };
  }
  const [unexpected] = positionals;
  if (unexpected !== undefined) {
    throw new UsageError(
      `list takes no argument (got '${unexpected}'): filter with --conversation, --channel, --status or --since, or show one message with messages show <id>`,
    );
  }
  for (const name of ["conversation", "channel"] as const) {
    if (options[name] === "") throw new UsageError(`--${name} needs a value`);
  }
  const query: MessageQuery = {
    conversationId: options.conversation,
    channel: options.channel,
    status: options.status === undefined ? undefined : parseStatus(options.status),
    since: options.since === undefined ? undefined : parseSince(options.since),
    limit: options.limit === undefined ? (options.all ? MAX_PAGE : DEFAULT_PAGE) : parseLimit(options.limit),
    cursor: options.cursor === undefined ? undefined : checkCursor(options.cursor),
  };
  const words = ["list"];
  for (const name of given.filter((option) => option !== "cursor")) {
    words.push(`--${name}`);
    const value = name === "all" ? undefined : options[name];
    if (value !== undefined) words.push(shellWord(value));
  }
  if (options.json) words.push("--json");
  return { action, query, all: options.all, json: options.json, words };
}

/**
 * The command that asks `request` again, ready to paste: from `source` (`--url <u>` or
 * `--config <f>`) and, for a list, from `cursor` (the next page's, or none).
 */
export function messagesCommand(
  request: MessagesRequest,
  cursor: string | null | undefined,
  source: readonly string[],
): string {
  const page = request.action === "list" && cursor !== null && cursor !== undefined ? ["--cursor", cursor] : [];
  return [CLI, "messages", ...request.words, ...page, ...source].join(" ");
}

function parseStatus(raw: string): MessageStatus {
  const status = MESSAGE_STATUSES.find((known) => known === raw);
  if (status !== undefined) return status;
  throw new UsageError(`--status must be one of ${MESSAGE_STATUSES.join(", ")} (got '${raw}')`);
}

/** As the API reads `since` (see {@link parseInstant}). */
function parseSince(raw: string): number {
  const ms = parseInstant(raw);
  if (ms !== undefined) return ms;
  throw new UsageError(
    `--since must be an ISO 8601 date or time, UTC unless it gives an offset (e.g. 2026-11-27T04:00:00Z, or a date: 2026-11-27), or epoch milliseconds (got '${raw}')`,
  );
}

function parseLimit(raw: string): number {
  const limit = /^\d{1,3}$/.test(raw) ? Number(raw) : Number.NaN;
  if (limit >= 1 && limit <= MAX_PAGE) return limit;
  throw new UsageError(`--limit must be a whole number from 1 to ${MAX_PAGE} (got '${raw}')`);
}

function checkCursor(raw: string): string {
  if (decodeCursor(raw) !== undefined) return raw;
  throw new UsageError(`--cursor must be a next_cursor that messages list printed (got '${raw}')`);
}
