import type { CursorPosition } from "../admin/dead-letter-cursor.js";
import type { StoredDeadLetter } from "../admin/dead-letter-item.js";
import { RETRY_AFTER_SECONDS } from "../app/refusals.js";
import { ChannelError } from "../channel-error.js";
import type { Job } from "../lifecycle/job.js";
import { subjectOf } from "../timeline/timeline-recorder.js";
import { type DeadLetter, replayableJob } from "./dead-letter.js";
import type { ImmediateDeadLetterStore, KeptWithin, ReplayedLetter } from "./dead-letter-store.js";

/**
 * Puts a replayed job back on its channel's queue when the queue has room for it
 * (`webhook.buffer_capacity`), and says whether it did.
 */
export type RestoreJob = (job: Job) => boolean;

const NONE_DROPPED: KeptWithin = { dropped: 0, droppedTotal: 0 };

/**
 * The characters of dead letters one channel keeps in memory by default. The count alone
 * (`admin.max_dead_letters`) let letters of the largest messages and replies fill the heap.
 */
export const DEFAULT_MAX_LETTER_CHARACTERS = 32 * 1024 * 1024;

/** What a letter holds in characters, as the bound counts it: the message, its replies, the error. */
function sizeOf(letter: DeadLetter): number {
  const { job } = letter;
  const { message } = job.message;
  let size = (message.text?.length ?? 0) + (message.mediaUrl?.length ?? 0) + letter.error.message.length;
  for (const reply of job.replies ?? []) size += reply.body.length;
  return size;
}

/**
 * The dead letters of a Node service without `state_dir`, in memory, lost when the process
 * ends like everything else then. Each channel's letters are kept in the list's order, so that
 * the bound drops from the front and a page is a slice. A replay hands each job to `restore`
 * (its channel's queue) at once, as far as the queue has room: a letter that does not fit stays
 * listed, for a later replay; a replay that had letters but room for none refuses with the 503
 * `buffer_full` a full channel gives, so that a script retries it.
 */
export function createMemoryDeadLetterStore(
  restore: RestoreJob,
  maxCharacters: number = DEFAULT_MAX_LETTER_CHARACTERS,
): ImmediateDeadLetterStore {
  const byId = new Map<string, StoredDeadLetter>();
  const byChannel = new Map<string, StoredDeadLetter[]>();
  let droppedTotal = 0;

  const insert = (stored: StoredDeadLetter): void => {
    const list = byChannel.get(stored.channel) ?? [];
    byChannel.set(stored.channel, list);
    list.splice(firstAfter(list, positionOf(stored)), 0, stored);
    byId.set(stored.id, stored);
  };
  const take = (id: string): StoredDeadLetter | undefined => {
    const stored = byId.get(id);
    if (stored === undefined) return undefined;
    byId.delete(id);
    const list = byChannel.get(stored.channel) ?? [];
    list.splice(list.indexOf(stored), 1);
    if (list.length === 0) byChannel.delete(stored.channel);
    return stored;
  };
  const listed = (channel: string | null): readonly StoredDeadLetter[] => {
    if (channel !== null) return byChannel.get(channel) ?? [];
    const lists = [...byChannel.values()];
    return lists.length === 1 ? (lists[0] ?? []) : lists.flat().sort(byPosition);
  };

  return {
    keep(letter, max) {
      const id = letter.job.message.id;
      const channel = letter.job.message.channel;
      const known = byId.get(id);
      if (known !== undefined && known.letter.diedAt >= letter.diedAt) return NONE_DROPPED;
      take(id);
      insert({ id, channel, letter });
      const list = byChannel.get(channel) ?? [];
      const overCount = Math.max(0, list.length - max);
      let over = overCount;
      // Then the characters: the oldest go while the channel's letters hold more, the newest kept.
      let size = 0;
      for (const stored of list.slice(over)) size += sizeOf(stored.letter);
      while (size > maxCharacters && over < list.length - 1) {
        const oldest = list[over];
        if (oldest !== undefined) size -= sizeOf(oldest.letter);
        over += 1;
      }
      if (over === 0) return NONE_DROPPED;
      for (const gone of list.splice(0, over)) byId.delete(gone.id);
      droppedTotal += over;
      return over > overCount ? { dropped: over, droppedTotal, maxCharacters } : { dropped: over, droppedTotal };
    },
    page(query) {
      const list = listed(query.channel);
      const start = query.after === null ? 0 : firstAfter(list, query.after);
      return { letters: list.slice(start, start + query.limit), more: list.length > start + query.limit };
    },
    one: (id) => byId.get(id),
    remove: (id) => take(id) !== undefined,
    replay(filter) {
      const ids = filter.ids === undefined ? undefined : new Set(filter.ids);
      const channels = filter.channels === undefined ? undefined : new Set(filter.channels);
      const chosen = listed(filter.channel ?? null).filter(
        (stored) =>
          (ids === undefined || ids.has(stored.id)) && (channels === undefined || channels.has(stored.channel)),
      );
      const replayed: ReplayedLetter[] = [];
      for (const stored of chosen) {
        // Off the list before the queue sees the job, so that the job dying again can only
        // add a new letter, never have it removed here.
        if (take(stored.id) === undefined) continue;
        if (restore(replayableJob(stored.letter))) replayed.push(subjectOf(stored.letter.job.message));
        // No room: listed again where it was, so that a full queue loses no dead letter.
        else insert(stored);
      }
      if (replayed.length === 0 && chosen.length > 0) throw queueFullError();
      return replayed;
    },
    count: () => byId.size,
  };
}

function positionOf(stored: StoredDeadLetter): CursorPosition {
  return { diedAt: stored.letter.diedAt, id: stored.id };
}

/** The list's order: failure time, then id. */
function compare(a: CursorPosition, b: CursorPosition): number {
  return a.diedAt - b.diedAt || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);
}

function byPosition(a: StoredDeadLetter, b: StoredDeadLetter): number {
  return compare(positionOf(a), positionOf(b));
}

/** The index of the first letter after `position` in a list in order (a binary search). */
function firstAfter(list: readonly StoredDeadLetter[], position: CursorPosition): number {
  let low = 0;
  let high = list.length;
  while (low < high) {
    const middle = (low + high) >>> 1;
    const stored = list[middle];
    if (stored !== undefined && compare(positionOf(stored), position) <= 0) low = middle + 1;
    else high = middle;
  }
  return low;
}

/** The refusal of a replay that found its channel's queue full: retried like a full buffer. */
function queueFullError(): ChannelError {
  return new ChannelError(
    "buffer_full",
    "The channel's queue is full (webhook.buffer_capacity): no dead letter was replayed and they stay listed; retry shortly.",
    { status: 503, retryable: true, retryAfterSeconds: RETRY_AFTER_SECONDS.bufferFull },
  );
}
