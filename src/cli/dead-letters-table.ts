import type { DeadLetterRow } from "../node/state/dead-letters.js";

/**
 * One dead letter as `dead-letters list --json` prints it: the names of the HTTP API
 * (snake_case), RFC 3339 times, and reply bodies as JSON rather than strings of JSON. It is
 * mapped from the stored record here so that the state's own format can change without
 * changing what scripts read.
 */
export interface DeadLetterItem {
  /** The id `dead-letters replay --id` takes; the message's id. */
  readonly id: string;
  readonly channel: string;
  readonly conversation_id: string;
  readonly message_id: string;
  /** When the last attempt failed, RFC 3339 in UTC. */
  readonly failed_at: string;
  /** Failed attempts of the step that died. */
  readonly attempts: number;
  /** `brain`: the brain was never answered; `reply`: a reply could not be delivered. */
  readonly stage: "brain" | "reply";
  readonly error: { readonly code: string; readonly message: string; readonly status: number | null };
  readonly message: {
    readonly sender_id: string;
    readonly sender_name: string | null;
    readonly text: string | null;
    readonly media_url: string | null;
    readonly media_type: string | null;
    /** When the service accepted it, RFC 3339 in UTC. */
    readonly received_at: string;
    readonly idempotency_key: string | null;
  };
  /** The replies the brain gave, in order; empty at the `brain` stage. */
  readonly replies: readonly {
    readonly id: string;
    readonly sequence: number;
    readonly delivered: boolean;
    readonly body: unknown;
  }[];
}

/** Maps a stored dead letter to what `--json` prints. */
export function deadLetterItem(row: DeadLetterRow): DeadLetterItem {
  const { job, error, attempts, diedAt } = row.letter;
  const { message } = job.message;
  return {
    id: row.id,
    channel: row.channel,
    conversation_id: message.conversationId,
    message_id: job.message.id,
    failed_at: new Date(diedAt).toISOString(),
    attempts,
    stage: job.replies === undefined ? "brain" : "reply",
    error: { code: error.code, message: error.message, status: error.status ?? null },
    message: {
      sender_id: message.senderId,
      sender_name: message.senderName ?? null,
      text: message.text ?? null,
      media_url: message.mediaUrl ?? null,
      media_type: message.mediaType ?? null,
      received_at: new Date(job.message.receivedAt).toISOString(),
      idempotency_key: job.message.idempotencyKey ?? null,
    },
    replies: (job.replies ?? []).map((reply, index) => ({
      id: reply.id,
      sequence: reply.sequence,
      delivered: index < job.delivered,
      body: parseBody(reply.body),
    })),
  };
}

/** A reply body is stored as the exact bytes sent; shown as JSON when it is JSON. */
function parseBody(body: string): unknown {
  try {
    return JSON.parse(body) as unknown;
  } catch {
    return body;
  }
}

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
