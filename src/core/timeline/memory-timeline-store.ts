import type { StoredTimeline, TimelinePageQuery, TimelineStore, TimelineSummary } from "./timeline-store.js";
import { type ActivityCount, inTimeOrder, isAfter, type TimelinePrune, type TimelineWrite } from "./timeline-store.js";

/** A message's row: one object per message, since every message's row outlives a young collection. */
interface Row {
  readonly id: string;
  readonly channel: string;
  readonly conversationId: string;
  readonly acceptedAt: number;
  status: TimelineSummary["status"];
  updatedAt: number;
  /** A write's own array, kept as it is (a writer hands over what it wrote); an update concatenates. */
  events: StoredTimeline["events"];
}

/**
 * The timeline in this process's memory (the memory mode, and tests): a map in the order rows
 * were created, which is acceptance order but for a run's write that lands first, close enough
 * for the bound, which drops the first created. Lost on exit, as everything in this mode is.
 * `maxMessages` bounds it at every write, not only at a prune, since memory is what it spends.
 */
export class MemoryTimelineStore implements TimelineStore {
  readonly #rows = new Map<string, Row>();
  readonly #minutes = new Map<string, ActivityCount>();
  readonly #maxMessages: number;
  /**
   * Row ids in the order they were created, from `#head` on: the bound drops from the front
   * here, since finding a map's first entry walks past every entry deleted before it.
   */
  #order: string[] = [];
  #head = 0;

  constructor(maxMessages = Number.POSITIVE_INFINITY) {
    this.#maxMessages = maxMessages;
  }

  write(writes: readonly TimelineWrite[], activity: readonly ActivityCount[]): void {
    for (const write of writes) {
      const row = this.#rows.get(write.id);
      if (row === undefined) {
        this.#order.push(write.id);
        this.#rows.set(write.id, {
          id: write.id,
          channel: write.channel,
          conversationId: write.conversationId,
          acceptedAt: write.acceptedAt,
          status: write.status ?? "accepted",
          updatedAt: write.updatedAt,
          events: write.events,
        });
        continue;
      }
      row.events = row.events.concat(write.events);
      if (write.status !== null && write.updatedAt >= row.updatedAt) row.status = write.status;
      if (write.updatedAt > row.updatedAt) row.updatedAt = write.updatedAt;
    }
    while (this.#rows.size > this.#maxMessages && this.#head < this.#order.length) {
      const id = this.#order[this.#head];
      this.#head += 1;
      if (id !== undefined) this.#rows.delete(id);
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
      this.#rows.delete(id);
      over -= 1;
    }
    for (const [key, count] of this.#minutes) if (count.minute < minutesBefore) this.#minutes.delete(key);
    // The queue the bound drops from holds what is left, once each: a prune may have taken rows
    // the bound never reached, and an id written again after it must not be dropped early.
    this.#order = [...this.#rows.keys()];
    this.#head = 0;
  }
}

function summaryOf(row: Row): TimelineSummary {
  const { id, channel, conversationId, acceptedAt, status, updatedAt } = row;
  return { id, channel, conversationId, acceptedAt, status, updatedAt };
}
