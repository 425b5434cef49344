import { isRecord } from "../is-record.js";
import type { TimelineEvent } from "./timeline-event.js";

/**
 * Events as a store keeps them: one JSON document a line, so that appending is concatenating
 * text (`||` in SQL) and no store parses what it holds to add to it.
 */
export function toEventLines(events: readonly TimelineEvent[]): string {
  let lines = "";
  for (const event of events) lines += `${JSON.stringify(event)}\n`;
  return lines;
}

/** The events of {@link toEventLines}' text; a line that is not an event is skipped. */
export function fromEventLines(text: string): TimelineEvent[] {
  const events: TimelineEvent[] = [];
  for (const line of text.split("\n")) {
    if (line === "") continue;
    try {
      const event: unknown = JSON.parse(line);
      if (isRecord(event) && typeof event.type === "string" && typeof event.at === "number") {
        events.push(event as unknown as TimelineEvent);
      }
    } catch {
      // A torn line (a crash mid-write cannot leave one in a transaction, but a hand edit can).
    }
  }
  return events;
}
