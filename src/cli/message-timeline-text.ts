import type { MessageTimelineView, WaitingView } from "../core/timeline/timeline-views.js";
import { printable, printableJson, shorten } from "./printable-text.js";

type EventView = MessageTimelineView["events"][number];

/** Longest message or reply text shown (when the service keeps text); --json has it whole. */
const MAX_TEXT = 80;

/**
 * The timeline `messages show` prints for people: the message's facts, why it waits while it
 * has not ended, then one line per event, oldest first, with its time in UTC, how long after
 * acceptance it came, its type and what it says.
 */
export function formatTimeline(view: MessageTimelineView): string {
  const head: [string, string][] = [
    ["message", printable(view.message_id)],
    ["channel", printable(view.channel)],
    ["conversation", printable(view.conversation_id)],
    ["status", view.status],
  ];
  if (view.waiting !== undefined) head.push(["waiting", waitingText(view.waiting)]);
  head.push(["accepted", view.accepted_at], ["updated", view.updated_at]);
  const accepted = Date.parse(view.accepted_at);
  const rows = view.events.map((event) => {
    const at = text(event.at) ?? "";
    return [at, sinceAccepted(Date.parse(at) - accepted), printable(text(event.type) ?? "?"), facts(event)];
  });
  const headings = ["TIME (UTC)", "AFTER", "EVENT", "FACTS"];
  const widths = headings.map((heading, column) =>
    Math.max(heading.length, ...rows.map((row) => row[column]?.length ?? 0)),
  );
  const line = (cells: readonly string[]) =>
    cells
      .map((cell, column) => (column === cells.length - 1 ? cell : cell.padEnd(widths[column] ?? 0)))
      .join("  ")
      .trimEnd();
  return `${head.map(([name, value]) => `${name.padEnd(12)}  ${value}`).join("\n")}\n\n${[line(headings), ...rows.map(line)].join("\n")}\n`;
}

/** Why a message that has not ended is not moving, in words. */
export function waitingText(waiting: WaitingView): string {
  const until = waiting.until === undefined ? "" : `; next try at ${waiting.until}`;
  switch (waiting.reason) {
    case "in_progress":
      return "under way now: its brain call or a reply's POST (or its turn for a slot of its brain)";
    case "receiver_down":
      // Its replies go when the receiver answers a probe again; `until` is when they stop waiting.
      return `the receiver is down (outbound_url fails); sent once it answers again, or given up at ${waiting.until ?? "?"}`;
    case "brain_paused":
      return `the brain is paused${until}`;
    case "retry":
      return `an attempt failed${until}`;
    case "behind_message":
      return `behind message ${printable(waiting.behind_message_id ?? "?")} of its conversation, which has not ended`;
    case "queued":
      return "in the queue, not started yet";
    default:
      return `${printable(String(waiting.reason))}${until}`;
  }
}

/** What an event says, in words; an event type this CLI does not know shows its fields. */
function facts(event: EventView): string {
  switch (event.type) {
    case "accepted":
      return join([
        labelled("client", event.client_address),
        labelled("idempotency key", event.idempotency_key),
        quoted(event.text),
      ]);
    case "brain_call":
      return brainCall(event);
    case "reply":
      return join([`#${String(event.sequence)} ${printable(text(event.reply_id) ?? "?")}`, quoted(event.text)]);
    case "attempt": {
      const reply = `#${String(event.sequence)} ${printable(text(event.reply_id) ?? "?")}`;
      const status = typeof event.status === "number" ? `HTTP ${event.status}` : undefined;
      const took = `in ${ms(event.duration_ms)}`;
      if (event.ok === true) return `${reply}: ${status ?? "ok"} ${took}`;
      return `${reply}: ${join([`failed ${took}`, status])}${failure(event)}`;
    }
    case "retry":
      return `next try at ${text(event.next_attempt_at) ?? "?"}${failure(event)}`;
    case "waiting":
      return event.reason === "receiver_down"
        ? `the receiver is down; sent once it answers again, or given up at ${text(event.until) ?? "?"}`
        : `${printable(String(event.reason))}; until ${text(event.until) ?? "?"}`;
    case "delivered":
      return "every reply delivered";
    case "dead_letter":
      return `gave up${failure(event)}`;
    case "replayed":
      return "the dead letter was put back in the queue";
    default: {
      const { at: _at, type: _type, ...rest } = event;
      return printable(JSON.stringify(rest));
    }
  }
}

function brainCall(event: EventView): string {
  const brain = `${printable(text(event.brain) ?? "?")}${event.fallback === true ? " (fallback)" : ""}`;
  const status = typeof event.status === "number" ? `HTTP ${event.status}` : undefined;
  // Paused with no status: the pause refused the call. With one, its answer began the pause.
  if (event.paused === true && status === undefined) return `${brain}: paused, not asked`;
  const tokens = tokensText(event.tokens);
  const outcome = event.ok === true ? "ok" : "failed";
  const paused = event.paused === true ? "; the brain is paused" : "";
  return `${brain}: ${join([`${outcome} in ${ms(event.duration_ms)}`, status, tokens])}${failure(event)}${paused}`;
}

function tokensText(tokens: unknown): string | undefined {
  if (typeof tokens !== "object" || tokens === null) return undefined;
  const { input, output } = tokens as { input?: unknown; output?: unknown };
  const parts = [
    typeof input === "number" ? `${input} in` : undefined,
    typeof output === "number" ? `${output} out` : undefined,
  ].filter((part) => part !== undefined);
  return parts.length === 0 ? undefined : `tokens ${parts.join(" / ")}`;
}

/** ` — code: message` of a failed event, or nothing. */
function failure(event: EventView): string {
  const code = text(event.error_code);
  const message = text(event.error);
  if (code === undefined && message === undefined) return "";
  return ` — ${[code, message]
    .filter((part) => part !== undefined)
    .map(printable)
    .join(": ")}`;
}

function labelled(label: string, value: unknown): string | undefined {
  const value_ = text(value);
  return value_ === undefined ? undefined : `${label} ${printable(value_)}`;
}

/** Message and reply text as a JSON string, which escapes what a terminal would act on. */
function quoted(value: unknown): string | undefined {
  const value_ = text(value);
  return value_ === undefined ? undefined : `text ${printableJson(shorten(value_, MAX_TEXT))}`;
}

function join(parts: readonly (string | undefined)[]): string {
  return parts.filter((part) => part !== undefined && part !== "").join(", ");
}

function text(value: unknown): string | undefined {
  return typeof value === "string" ? value : undefined;
}

function ms(value: unknown): string {
  return typeof value === "number" ? `${value} ms` : "? ms";
}

/** How long after acceptance: milliseconds under a minute, then minutes, then hours. */
function sinceAccepted(ms: number): string {
  if (!Number.isFinite(ms)) return "";
  const sign = ms < 0 ? "-" : "+";
  const abs = Math.abs(ms);
  if (abs < 60_000) return `${sign}${(abs / 1000).toFixed(3)}s`;
  const minutes = Math.floor(abs / 60_000);
  if (minutes < 60) return `${sign}${minutes}m${String(Math.floor((abs % 60_000) / 1000)).padStart(2, "0")}s`;
  return `${sign}${Math.floor(minutes / 60)}h${String(minutes % 60).padStart(2, "0")}m`;
}
