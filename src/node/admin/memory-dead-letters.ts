import type { AdminDeadLetters } from "../../core/admin/dead-letter-admin.js";
import { decodeCursor, encodeCursor } from "../../core/admin/dead-letter-cursor.js";
import { deadLetterItem, type StoredDeadLetter } from "../../core/admin/dead-letter-item.js";
import type { DeadLetter } from "../../core/delivery/dead-letter.js";
import type { Job } from "../../core/delivery/job.js";
import { replayableJob } from "../state/dead-letters.js";

/** The dead letters of a service without `state_dir`, and the admin API over them. */
export interface MemoryDeadLetters extends AdminDeadLetters {
  /** Keeps a new dead letter (the job queue's `onDeadLetter`). */
  add(letter: DeadLetter): void;
  /** Keeps at most `max` of `channel`, dropping the oldest; returns how many went. */
  trim(channel: string, max: number): number;
}

/**
 * Dead letters kept in memory, per channel in the order they died (so oldest first), lost
 * when the process ends like everything else without `state_dir`. A replay hands the job
 * back to `restore` (its channel's queue) at once.
 */
export function createMemoryDeadLetters(restore: (job: Job) => void): MemoryDeadLetters {
  const byChannel = new Map<string, StoredDeadLetter[]>();
  const all = (channel: string | undefined): StoredDeadLetter[] => {
    const lists = channel === undefined ? [...byChannel.values()] : [byChannel.get(channel) ?? []];
    return lists.flat().sort((a, b) => a.letter.diedAt - b.letter.diedAt || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  };
  const take = (id: string): StoredDeadLetter | undefined => {
    for (const list of byChannel.values()) {
      const index = list.findIndex((stored) => stored.id === id);
      if (index >= 0) return list.splice(index, 1)[0];
    }
    return undefined;
  };
  return {
    add(letter) {
      const channel = letter.job.message.channel;
      const list = byChannel.get(channel) ?? [];
      byChannel.set(channel, list);
      // A replayed letter that dies again replaces its old entry, as the SQLite upsert does.
      take(letter.job.message.id);
      list.push({ id: letter.job.message.id, channel, letter });
    },
    trim(channel, max) {
      const list = byChannel.get(channel) ?? [];
      const over = Math.max(0, list.length - max);
      list.splice(0, over);
      return over;
    },
    async list(query) {
      const after = query.cursor === undefined ? undefined : decodeCursor(query.cursor);
      const rest = all(query.channel).filter(
        (stored) =>
          after === undefined ||
          stored.letter.diedAt > after.diedAt ||
          (stored.letter.diedAt === after.diedAt && stored.id > after.id),
      );
      const shown = rest.slice(0, query.limit);
      const last = shown.at(-1);
      return {
        items: shown.map(deadLetterItem),
        nextCursor:
          rest.length > query.limit && last !== undefined
            ? encodeCursor({ diedAt: last.letter.diedAt, id: last.id })
            : null,
      };
    },
    async get(id) {
      const found = all(undefined).find((stored) => stored.id === id);
      return found === undefined ? undefined : deadLetterItem(found);
    },
    async replay(filter) {
      const chosen = all(filter.channel).filter((stored) => filter.ids === undefined || filter.ids.includes(stored.id));
      for (const stored of chosen) {
        take(stored.id);
        restore(replayableJob(stored.letter));
      }
      return chosen.length;
    },
    async delete(id) {
      return take(id) !== undefined;
    },
  };
}
