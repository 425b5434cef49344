import type { AdminDeadLetters } from "../../core/admin/dead-letter-admin.js";
import { decodeCursor, encodeCursor } from "../../core/admin/dead-letter-cursor.js";
import { deadLetterItem, type StoredDeadLetter } from "../../core/admin/dead-letter-item.js";
import { RETRY_AFTER_SECONDS } from "../../core/app/refusals.js";
import { ChannelError } from "../../core/channel-error.js";
import { type DeadLetter, replayableJob } from "../../core/delivery/dead-letter.js";
import type { Job } from "../../core/delivery/job.js";

/** The dead letters of a service without `state_dir`, and the admin API over them. */
export interface MemoryDeadLetters extends AdminDeadLetters {
  /** Keeps a new dead letter (the job queue's `onDeadLetter`). */
  add(letter: DeadLetter): void;
  /** Keeps at most `max` of `channel`, dropping the oldest; returns how many went. */
  trim(channel: string, max: number): number;
}

/**
 * Puts a replayed job back on its channel's queue when the queue has room for it
 * (`webhook.buffer_capacity`), and says whether it did.
 */
export type RestoreJob = (job: Job) => boolean;

/**
 * Dead letters kept in memory, per channel in the order they died (so oldest first), lost
 * when the process ends like everything else without `state_dir`. A replay hands each job
 * back to `restore` (its channel's queue) at once, as far as the queue has room: a letter
 * that does not fit stays listed where it was, for a later replay. A replay that had letters
 * to replay but room for none refuses with the 503 `buffer_full` a full channel gives.
 */
export function createMemoryDeadLetters(restore: RestoreJob): MemoryDeadLetters {
  const byChannel = new Map<string, StoredDeadLetter[]>();
  const all = (channel: string | undefined): StoredDeadLetter[] => {
    const lists = channel === undefined ? [...byChannel.values()] : [byChannel.get(channel) ?? []];
    return lists.flat().sort((a, b) => a.letter.diedAt - b.letter.diedAt || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  };
  const locate = (id: string): { list: StoredDeadLetter[]; index: number } | undefined => {
    for (const list of byChannel.values()) {
      const index = list.findIndex((stored) => stored.id === id);
      if (index >= 0) return { list, index };
    }
    return undefined;
  };
  const take = (id: string): StoredDeadLetter | undefined => {
    const at = locate(id);
    return at === undefined ? undefined : at.list.splice(at.index, 1)[0];
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
      let replayed = 0;
      for (const stored of chosen) {
        const at = locate(stored.id);
        if (at === undefined) continue;
        // Off the list before the queue sees the job, so that the job dying again can only
        // add a new entry, never have it removed here.
        at.list.splice(at.index, 1);
        if (restore(replayableJob(stored.letter))) replayed += 1;
        // No room: back where it was, so that a full queue loses no dead letter.
        else at.list.splice(at.index, 0, stored);
      }
      if (replayed === 0 && chosen.length > 0) throw queueFullError();
      return replayed;
    },
    async delete(id) {
      return take(id) !== undefined;
    },
  };
}

/** The refusal of a replay that found its channel's queue full: retried like a full buffer. */
function queueFullError(): ChannelError {
  return new ChannelError(
    "buffer_full",
    "The channel's queue is full (webhook.buffer_capacity): no dead letter was replayed and they stay listed; retry shortly.",
    { status: 503, retryable: true, retryAfterSeconds: RETRY_AFTER_SECONDS.bufferFull },
  );
}
