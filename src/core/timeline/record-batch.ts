import type { Mutable } from "../mutable.js";
import { countEvent, minuteOf } from "./activity-series.js";
import type { MessageStatus, TimelineEvent } from "./timeline-event.js";
import type { ActivityCount, TimelineSubject, TimelineWrite } from "./timeline-store.js";

/** A message's events gathered for one write. */
interface Gathered extends Omit<Mutable<TimelineWrite>, "events"> {
  readonly events: TimelineEvent[];
}

/** What one batch writes: a row write per message, in the order first recorded, and the minute counts. */
export interface TakenBatch {
  readonly writes: TimelineWrite[];
  readonly counts: ActivityCount[];
}

/**
 * The records made since the last write, kept as they came: a record only appends to three
 * arrays, so a message's path touches no map and builds no row. Grouping them into one write
 * per message, and counting the minutes, happen when the batch is taken, in one pass over
 * memory that stays warm, which is what a lookup per record on the path would not have.
 */
export class RecordBatch {
  #subjects: TimelineSubject[] = [];
  #events: (readonly TimelineEvent[])[] = [];
  #statuses: (MessageStatus | null)[] = [];

  /** Records kept for the next write. */
  get size(): number {
    return this.#subjects.length;
  }

  /** Keeps one record: `events` of `subject`, and the status they give it (null: unchanged). */
  push(subject: TimelineSubject, events: readonly TimelineEvent[], status: MessageStatus | null): void {
    this.#subjects.push(subject);
    this.#events.push(events);
    this.#statuses.push(status);
  }

  /** Everything recorded so far, one write per message, leaving the batch empty. */
  take(): TakenBatch {
    const subjects = this.#subjects;
    const eventLists = this.#events;
    const statuses = this.#statuses;
    this.#subjects = [];
    this.#events = [];
    this.#statuses = [];
    const byId = new Map<string, Gathered>();
    const minutes = new Map<number, Map<string, number>>();
    let minute = Number.NaN;
    let series = new Map<string, number>();
    let at = 0;
    const count = (name: string): void => {
      const eventMinute = minuteOf(at);
      if (eventMinute !== minute) {
        minute = eventMinute;
        series = minutes.get(minute) ?? new Map<string, number>();
        minutes.set(minute, series);
      }
      series.set(name, (series.get(name) ?? 0) + 1);
    };
    for (let index = 0; index < subjects.length; index += 1) {
      const subject = subjects[index];
      const events = eventLists[index];
      if (subject === undefined || events === undefined) continue;
      let write = byId.get(subject.id);
      if (write === undefined) {
        write = {
          id: subject.id,
          channel: subject.channel,
          conversationId: subject.conversationId,
          acceptedAt: subject.acceptedAt,
          status: null,
          updatedAt: subject.acceptedAt,
          events: [],
        };
        byId.set(subject.id, write);
      }
      for (const event of events) {
        write.events.push(event);
        if (event.at > write.updatedAt) write.updatedAt = event.at;
        at = event.at;
        countEvent(event, subject.acceptedAt, count);
      }
      const status = statuses[index] ?? null;
      if (status !== null) write.status = status;
    }
    const counts: ActivityCount[] = [];
    for (const [start, named] of minutes) {
      for (const [name, value] of named) counts.push({ minute: start, series: name, count: value });
    }
    return { writes: [...byId.values()], counts };
  }
}
