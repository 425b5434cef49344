import type { CursorPosition } from "../admin/dead-letter-cursor.js";
import type { StoredDeadLetter } from "../admin/dead-letter-item.js";
import type { TimelineSubject } from "../timeline/timeline-store.js";
import type { DeadLetter } from "./dead-letter.js";

/** What keeping a letter dropped from its channel to stay within the bound. */
export interface KeptWithin {
  /** Letters of the channel dropped by this keep, the oldest (by failure time, then id) first; mostly 0. */
  readonly dropped: number;
  /**
   * Letters this store has dropped over the bound, this keep's included (a Durable Object counts
   * for ever, a Node process since it started). Only read when `dropped` is above 0: 0 otherwise,
   * so that a store never reads its counter for the common keep.
   */
  readonly droppedTotal: number;
  /**
   * Set when the in-memory store dropped letters for the characters they hold rather than for
   * their count: that bound, so that the warning names the bound that was reached.
   */
  readonly maxCharacters?: number;
}

/** Which listed letters one page holds, oldest first. */
export interface DeadLetterPageQuery {
  /** Only this channel's; null for every channel's, in one order. */
  readonly channel: string | null;
  /** The last letter of the previous page; null for the first page. */
  readonly after: CursorPosition | null;
  /** At most this many (1 to 500: the routes check it). */
  readonly limit: number;
}

/** One page of listed letters, oldest first. */
export interface StoredDeadLetterPage {
  readonly letters: readonly StoredDeadLetter[];
  /**
   * Whether letters follow. A store may stop a page before `limit` (the Durable Object does for
   * very large letters, to bound one RPC answer) and says `more` then.
   */
  readonly more: boolean;
}

/**
 * Which letters a replay takes: all (of `channel`, when given), or only those in `ids`; with
 * `channels`, only letters of one of those channels among them.
 */
export interface ReplayFilter {
  readonly channel?: string;
  readonly ids?: readonly string[];
  readonly channels?: readonly string[];
}

/**
 * A letter a replay took off the list, as its message's timeline knows the message (id,
 * channel, conversation, acceptance time): what the admin records a `replayed` event for.
 */
export type ReplayedLetter = TimelineSubject;

/**
 * What a runtime must store for dead letters: the letters that are listed (not being replayed),
 * each under its message's id, ordered by failure time and then id. Memory and SQLite on Node
 * and the Durable Object on Workers implement it; the admin API's paging, cursor and the bound's
 * warning are written once, over it, in the core (`create-admin-dead-letters.ts`,
 * `keep-dead-letter.ts`), and one contract suite holds every implementation to the same
 * behaviour. Methods may answer at once or with a promise.
 */
export interface DeadLetterStore {
  /**
   * Keeps a letter and bounds its channel to `max` listed letters, dropping the oldest. A later
   * death of the same message (a replay that failed again) replaces its letter; a copy that died
   * no later than the kept one (the dead-letter queue delivers at least once) changes nothing.
   * A store whose job queue writes the letter as the job dies (Node's SQLite and Postgres, in
   * the transaction that ends the job) only bounds the channel here: a write after the job's
   * would bring back a letter that a replay took in between.
   */
  keep(letter: DeadLetter, max: number): KeptWithin | Promise<KeptWithin>;
  /** One page of listed letters, strictly after `query.after` in the order of the list. */
  page(query: DeadLetterPageQuery): StoredDeadLetterPage | Promise<StoredDeadLetterPage>;
  /** One listed letter, or undefined (unknown, or being replayed). */
  one(id: string): StoredDeadLetter | undefined | Promise<StoredDeadLetter | undefined>;
  /** Forgets a listed letter; false when there is none with this id. */
  remove(id: string): boolean | Promise<boolean>;
  /**
   * Runs the chosen letters again and takes them off the list (each runtime has its own way
   * back to the queue); returns the letters it took, in no given order, unknown ids skipped.
   * Exactly those: a letter deleted, or replayed by another replica, before this replay took
   * it is not among them, so that its timeline gets no `replayed` it did not have.
   */
  replay(filter: ReplayFilter): readonly ReplayedLetter[] | Promise<readonly ReplayedLetter[]>;
  /** Listed letters, every channel's. */
  count(): number | Promise<number>;
}

/**
 * A store whose methods answer at once: Node's memory and SQLite stores. The job queue's
 * dead-letter hook is synchronous, so it keeps letters through such a store only.
 */
export type ImmediateDeadLetterStore = {
  readonly [K in keyof DeadLetterStore]: (
    ...args: Parameters<DeadLetterStore[K]>
  ) => Awaited<ReturnType<DeadLetterStore[K]>>;
};
