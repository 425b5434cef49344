import type { Mutable } from "../mutable.js";
import { countEvent, minuteOf } from "./activity-series.js";
import type { MessageStatus, TimelineEvent } from "./timeline-event.js";
import type { ActivityCount, TimelineSubject, TimelineWrite } from "./timeline-store.js";

/** A message's events gathered for one write. */
interface Gathered extends Omit<Mutable<TimelineWrite>, "events"> {
  /** The first record's own array until a second record of the message joins it. */
  events: readonly TimelineEvent[];
}

/** What one batch writes: a row write per message, in the order first recorded, and the minute counts. */
export interface TakenBatch {
  readonly writes: TimelineWrite[];
  readonly counts: ActivityCount[];
}

/**
 * The records made since the last write, kept as they came: a record only appends to arrays of
 * its fields, so a message's path touches no map, builds no row and keeps no object of its own
 * alive until the write (what outlives a young collection is copied by each). Grouping them into
 * one write per message, and counting the minutes, happen when the batch is taken, in one pass
 * over memory that stays warm, which is what a lookup per record on the path would not have.
 */
export class RecordBatch {
  #ids: string[] = [];
  #channels: string[] = [];
  #conversationIds: string[] = [];
  #acceptedAts: number[] = [];
  #events: (readonly TimelineEvent[])[] = [];
  #statuses: (MessageStatus | null)[] = [];

  /** Records kept for the next write. */
  get size(): number {
    return this.#ids.length;
  }

  /** Keeps one record: `events` of `subject`, and the status they give it (null: unchanged). */
  push(subject: TimelineSubject, events: readonly TimelineEvent[], status: MessageStatus | null): void {
    this.#ids.push(subject.id);
    this.#channels.push(subject.channel);
    this.#conversationIds.push(subject.conversationId);
    this.#acceptedAts.push(subject.acceptedAt);
    this.#events.push(events);
    this.#statuses.push(status);
  }

  /** Everything recorded so far, one write per message, leaving the batch empty. */
  take(): TakenBatch {
    const ids = this.#ids;
    const channels = this.#channels;
    const conversationIds = this.#conversationIds;
    const acceptedAts = this.#acceptedAts;
    const eventLists = this.#events;
    const statuses = this.#statuses;
    this.#ids = [];
    this.#channels = [];
    this.#conversationIds = [];
    this.#acceptedAts = [];
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
    for (let index = 0; index < ids.length; index += 1) {
      const id = ids[index];
      const channel = channels[index];
      const conversationId = conversationIds[index];
      const acceptedAt = acceptedAts[index];
      const events = eventLists[index];
      if (id === undefined || channel === undefined || conversationId === undefined) continue;
      if (acceptedAt === undefined || events === undefined) continue;
      let write = byId.get(id);
      if (write === undefined) {
        write = { id, channel, conversationId, acceptedAt, status: null, updatedAt: acceptedAt, events };
        byId.set(id, write);
      } else {
        write.events = write.events.concat(events);
      }
      for (const event of events) {
        if (event.at > write.updatedAt) write.updatedAt = event.at;
        at = event.at;
        countEvent(event, acceptedAt, count);
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
