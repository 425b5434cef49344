import { type Child, el } from "./dom.js";
import { timeEl } from "./format-time.js";
import { millis } from "./status-words.js";
import type { TimelineEvent } from "./timeline-types.js";

/** What one event says: a title, the sentence after it, whether it went wrong, and any text kept. */
interface Described {
  readonly title: string;
  readonly parts: readonly Child[];
  readonly failed?: boolean;
  /** Message or reply text, shown only when the operator has the service keep it. */
  readonly text?: string | undefined;
}

/** "code (HTTP 503): message", of what the event has. */
function failure(code: string | undefined, status: number | undefined, message: string | undefined): string {
  const head = [code, status === undefined ? undefined : `HTTP ${status}`].filter((part) => part !== undefined);
  const label = head.length === 0 ? "" : head.length === 1 ? `${head[0]}` : `${head[0]} (${head[1]})`;
  if (message === undefined) return label === "" ? "no reason given" : label;
  return label === "" ? message : `${label}: ${message}`;
}

function tokens(usage: { readonly input?: number; readonly output?: number } | undefined): string {
  if (usage === undefined) return "";
  const parts = [
    usage.input === undefined ? undefined : `${usage.input} in`,
    usage.output === undefined ? undefined : `${usage.output} out`,
  ].filter((part) => part !== undefined);
  return parts.length === 0 ? "" : `; tokens ${parts.join(", ")}`;
}

function describeEvent(event: TimelineEvent): Described {
  switch (event.type) {
    case "accepted": {
      const facts = [
        event.client_address === undefined ? undefined : `from ${event.client_address}`,
        event.idempotency_key === undefined ? undefined : `Idempotency-Key ${event.idempotency_key}`,
      ].filter((fact) => fact !== undefined);
      return { title: "Accepted", parts: facts.length === 0 ? [] : [facts.join(", ")], text: event.text };
    }
    case "brain_call": {
      const who = `brain ${event.brain}${event.fallback ? " (a fallback)" : ""}`;
      // Paused with no status: the pause refused the call. With one, its answer began the pause.
      if (event.paused === true && event.status === undefined) {
        return {
          title: "Brain paused",
          parts: [`${who} was not asked: it is paused after a 429 or 503`],
          failed: true,
        };
      }
      if (event.ok) {
        return { title: "Brain answered", parts: [`${who} in ${millis(event.duration_ms)}${tokens(event.tokens)}`] };
      }
      const why = failure(event.error_code, event.status, event.error);
      const paused = event.paused === true ? "; the brain is paused for everyone" : "";
      return {
        title: event.paused === true ? "Brain paused" : "Brain failed",
        parts: [`${who} after ${millis(event.duration_ms)}: ${why}${paused}`],
        failed: true,
      };
    }
    case "reply":
      return { title: `Reply ${event.sequence}`, parts: [el("code", { text: event.reply_id })], text: event.text };
    case "attempt": {
      const what = `reply ${event.sequence} (`;
      const took = `) in ${millis(event.duration_ms)}`;
      if (event.ok) {
        const status = event.status === undefined ? "" : `, HTTP ${event.status}`;
        return { title: "Posted", parts: [what, el("code", { text: event.reply_id }), `${took}${status}`] };
      }
      const why = failure(event.error_code, event.status, event.error);
      return {
        title: "Post failed",
        parts: [what, el("code", { text: event.reply_id }), `${took}: ${why}`],
        failed: true,
      };
    }
    case "retry":
      return {
        title: "Will try again",
        parts: ["at ", timeEl(event.next_attempt_at), `, after ${failure(event.error_code, undefined, event.error)}`],
        failed: true,
      };
    case "waiting":
      return {
        title: "Waiting for the receiver",
        parts: ["it is down; held until it is back, or until ", timeEl(event.until), " at the latest"],
        failed: true,
      };
    case "delivered":
      return { title: "Delivered", parts: ["every reply reached the receiver"] };
    case "dead_letter":
      return { title: "Dead-lettered", parts: [failure(event.error_code, undefined, event.error)], failed: true };
    case "replayed":
      return { title: "Replayed", parts: ["from the dead letters, by an operator"] };
    default:
      return { title: String((event as { readonly type: unknown }).type), parts: [] };
  }
}

/** One event of a timeline as an item of its ordered list: when, what, and how it went. */
export function eventItem(event: TimelineEvent): HTMLLIElement {
  const { title, parts, failed, text } = describeEvent(event);
  const children: Child[] = [timeEl(event.at), " ", el("strong", { text: title })];
  if (parts.length > 0) children.push(": ", ...parts);
  if (text !== undefined) children.push(el("pre", { text }));
  return el("li", { className: failed === true ? "failed" : "ok" }, children);
}
