import type { StoredTimeline, TimelinePageQuery, TimelineStore, TimelineSummary } from "./timeline-store.js";
import { type ActivityCount, inTimeOrder, isAfter, type TimelinePrune, type TimelineWrite } from "./timeline-store.js";

/**
 * A message's row. A write of a new message that sets its status becomes its row as it is (a
 * write is handed over), so a message costs the store no object of its own; a later write
 * replaces the row, which is rare (a retry, a replay, a run that spans two batches).
 */
type Row = StoredTimeline;

/**
 * The timeline in this process's memory (the memory mode, and tests): a map in the order rows
 * were created, which is acceptance order but for a run's write that lands first, close enough
 * for the bound, which drops the first created. Lost on exit, as everything in this mode is.
 * `maxMessages` bounds it at every write, not only at a prune, since memory is what it spends;
 * so does `maxCharacters`, the text the events hold together (`timeline.keep_text`), which the
 * count alone would let the largest messages and replies spend without limit.
 */
export class MemoryTimelineStore implements TimelineStore {
  readonly #rows = new Map<string, Row>();
  readonly #minutes = new Map<string, ActivityCount>();
  readonly #maxMessages: number;
  readonly #maxCharacters: number;
  /** The characters of text every row's events hold together. */
  #characters = 0;
  /**
   * Row ids in the order they were created, from `#head` on: the bound drops from the front
   * here, since finding a map's first entry walks past every entry deleted before it.
   */
  #order: string[] = [];
  #head = 0;

  constructor(maxMessages = Number.POSITIVE_INFINITY, maxCharacters = DEFAULT_MAX_TIMELINE_CHARACTERS) {
    this.#maxMessages = maxMessages;
    this.#maxCharacters = maxCharacters;
  }

  #forget(id: string): void {
    const row = this.#rows.get(id);
    if (row === undefined) return;
    this.#characters -= textOf(row.events);
    this.#rows.delete(id);
  }

  write(writes: readonly TimelineWrite[], activity: readonly ActivityCount[]): void {
    for (const write of writes) {
      const row = this.#rows.get(write.id);
      this.#characters += textOf(write.events);
      if (row === undefined) {
        this.#order.push(write.id);
        this.#rows.set(write.id, setsStatus(write) ? write : { ...write, status: "accepted" });
        continue;
      }
      const later = write.updatedAt >= row.updatedAt;
      this.#rows.set(write.id, {
        id: row.id,
        channel: row.channel,
        conversationId: row.conversationId,
        acceptedAt: row.acceptedAt,
        status: write.status !== null && later ? write.status : row.status,
        updatedAt: later ? write.updatedAt : row.updatedAt,
        events: row.events.concat(write.events),
      });
    }
    while (
      (this.#rows.size > this.#maxMessages || (this.#characters > this.#maxCharacters && this.#rows.size > 1)) &&
      this.#head < this.#order.length
    ) {
      const id = this.#order[this.#head];
      this.#head += 1;
      if (id !== undefined) this.#forget(id);
    }
    if (this.#head > 1_024 && this.#head * 2 > this.#order.length) {
      this.#order = this.#order.slice(this.#head);
      this.#head = 0;
    }
    for (const count of activity) {
      const key = `${count.minute} ${count.series}`;
      const kept = this.#minutes.get(key);
      this.#minutes.set(key, { ...count, count: (kept?.count ?? 0) + count.count });
    }
  }

  one(id: string): StoredTimeline | undefined {
    const row = this.#rows.get(id);
    return row === undefined ? undefined : { ...summaryOf(row), events: inTimeOrder(row.events) };
  }

  page(query: TimelinePageQuery): readonly TimelineSummary[] {
    const matching: Row[] = [];
    for (const summary of this.#rows.values()) {
      if (query.channel !== undefined && summary.channel !== query.channel) continue;
      if (query.conversationId !== undefined && summary.conversationId !== query.conversationId) continue;
      if (query.status !== undefined && summary.status !== query.status) continue;
      if (query.since !== undefined && summary.acceptedAt < query.since) continue;
      if (!isAfter(summary, query.before)) continue;
      matching.push(summary);
    }
    matching.sort((a, b) => b.acceptedAt - a.acceptedAt || (a.id < b.id ? 1 : a.id > b.id ? -1 : 0));
    return matching.slice(0, query.limit).map(summaryOf);
  }

  activity(since: number): readonly ActivityCount[] {
    return [...this.#minutes.values()].filter((count) => count.minute >= since);
  }

  prune({ before, keep, minutesBefore }: TimelinePrune): void {
    let over = this.#rows.size - keep;
    for (const [id, row] of this.#rows) {
      if (over <= 0 && row.acceptedAt >= before) break;
      // Written within the window (a dead letter replayed after it passed): still kept.
      if (over <= 0 && row.updatedAt >= before) continue;
      this.#forget(id);
      over -= 1;
    }
    for (const [key, count] of this.#minutes) if (count.minute < minutesBefore) this.#minutes.delete(key);
    // The queue the bound drops from holds what is left, once each: a prune may have taken rows
    // the bound never reached, and an id written again after it must not be dropped early.
    this.#order = [...this.#rows.keys()];
    this.#head = 0;
  }
}

/** The characters of text a process keeps in its timeline by default (with `keep_text`). */
export const DEFAULT_MAX_TIMELINE_CHARACTERS = 32 * 1024 * 1024;

/** The text of events (a message's, a reply's), as the bound counts it. */
function textOf(events: readonly Row["events"][number][]): number {
  let size = 0;
  for (const event of events) if ("text" in event && typeof event.text === "string") size += event.text.length;
  return size;
}

function setsStatus(write: TimelineWrite): write is TimelineWrite & Pick<Row, "status"> {
  return write.status !== null;
}

function summaryOf(row: Row): TimelineSummary {
  const { id, channel, conversationId, acceptedAt, status, updatedAt } = row;
  return { id, channel, conversationId, acceptedAt, status, updatedAt };
}
