/**
 * What the dead-letter store contract (`dead-letter-store-contract.ts`) is run with and builds
 * its letters from: the store under test, letters of channels of their own, and what a replay
 * answers for them. Runtime-neutral, as the contract is.
 */
import type { DeadLetter } from "../../../src/core/dead-letters/dead-letter.js";
import type {
  DeadLetterStore,
  ImmediateDeadLetterStore,
  ReplayedLetter,
} from "../../../src/core/dead-letters/dead-letter-store.js";
import { keepDeadLetter, warnOverBound } from "../../../src/core/dead-letters/keep-dead-letter.js";
import { createJsonLogger } from "../../../src/core/log/logger.js";

/** A store to hold to the contract, and how its runtime keeps a letter with the bound's warning. */
export interface DeadLetterStoreUnderTest {
  readonly store: DeadLetterStore;
  /**
   * Keeps a letter as the runtime does after a death, its channel bounded to `max`, and returns
   * the JSON log lines written meanwhile.
   */
  readonly keepLogged: (letter: DeadLetter, max: number) => Promise<readonly Record<string, unknown>[]>;
  /**
   * For a store whose job queue writes each letter as its job dies (Node's SQLite and Postgres):
   * that write alone. `store.keep` makes it first, as the runtime does before it keeps.
   */
  readonly bury?: (letter: DeadLetter) => Promise<void>;
  /** The store itself, whose `keep` only bounds the channel of a letter written by `bury`. */
  readonly unkept?: DeadLetterStore;
}

/**
 * A store that answers at once (Node's, and any that keeps letters where the job queue runs),
 * kept through the core's `keepDeadLetter` as Node's admin does, with a logger of its own.
 * `bury`, for a store whose job queue writes each letter as the job dies (SQLite), is that
 * write: made before each keep, as the runtime makes it.
 */
export function keptThroughCore(
  store: ImmediateDeadLetterStore,
  bury?: (letter: DeadLetter) => void,
): DeadLetterStoreUnderTest {
  const kept: ImmediateDeadLetterStore =
    bury === undefined
      ? store
      : {
          ...store,
          keep(letter, max) {
            bury(letter);
            return store.keep(letter, max);
          },
        };
  return {
    store: kept,
    async keepLogged(letter, max) {
      const lines: Record<string, unknown>[] = [];
      const logger = createJsonLogger((line) => lines.push(JSON.parse(line) as Record<string, unknown>), "debug");
      keepDeadLetter(kept, letter, { max, logger });
      return lines;
    },
    ...(bury === undefined ? {} : { bury: (letter: DeadLetter) => Promise.resolve(bury(letter)), unkept: store }),
  };
}

/**
 * A store that answers with a promise (Postgres), kept as Node's admin keeps such a store: the
 * core's `warnOverBound` on the answer, with a logger of its own. `bury` as for
 * {@link keptThroughCore}.
 */
export function keptThroughCoreAsync(
  store: DeadLetterStore,
  bury?: (letter: DeadLetter) => Promise<void>,
): DeadLetterStoreUnderTest {
  const kept: DeadLetterStore =
    bury === undefined
      ? store
      : {
          ...store,
          async keep(letter, max) {
            await bury(letter);
            return store.keep(letter, max);
          },
        };
  return {
    store: kept,
    async keepLogged(letter, max) {
      const lines: Record<string, unknown>[] = [];
      const logger = createJsonLogger((line) => lines.push(JSON.parse(line) as Record<string, unknown>), "debug");
      warnOverBound(await kept.keep(letter, max), letter, { max, logger });
      return lines;
    },
    ...(bury === undefined ? {} : { bury, unkept: store }),
  };
}

/** A bound no test reaches. */
export const MANY = 1_000;

/** A channel no other test uses. */
export const freshChannel = (): string => `dead-${crypto.randomUUID()}`;

/** A dead letter of `channel` that failed at `diedAt`, under a fresh message id unless given one. */
export function deadLetter(
  channel: string,
  diedAt: number,
  fields: { id?: string; error?: string; text?: string } = {},
): DeadLetter {
  return {
    job: {
      message: {
        id: fields.id ?? crypto.randomUUID(),
        channel,
        receivedAt: diedAt - 5_000,
        message: {
          senderId: "u1",
          conversationId: `conversation-${crypto.randomUUID()}`,
          text: fields.text ?? "hello",
        },
      },
      delivered: 0,
      attempts: 3,
    },
    error: {
      code: "upstream_rejected",
      message: fields.error ?? "receiver answered 400",
      retryable: false,
      status: 400,
    },
    attempts: 3,
    diedAt,
  };
}

/** The id a letter is kept under: its message's. */
export const idOf = (letter: DeadLetter): string => letter.job.message.id;

/** What a replay answers for a letter it took: its message as the timeline knows it. */
export const subjectOf = (letter: DeadLetter): ReplayedLetter => ({
  id: letter.job.message.id,
  channel: letter.job.message.channel,
  conversationId: letter.job.message.message.conversationId,
  acceptedAt: letter.job.message.receivedAt,
});

/** Orders replayed letters by id. */
export const bySubjectId = (a: ReplayedLetter, b: ReplayedLetter): number => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);

/** Replayed letters in id order: a store answers them in any. */
export const byId = (letters: readonly ReplayedLetter[]): ReplayedLetter[] => [...letters].sort(bySubjectId);

/** Failure times well in the past, so that letters other tests keep now sort after these. */
export const pastBase = (): number => Date.now() - 3_600_000;

/** The ids of a channel's listed letters, in the list's order. */
export async function listedIds(store: DeadLetterStore, channel: string): Promise<string[]> {
  return (await store.page({ channel, after: null, limit: 500 })).letters.map((stored) => stored.id);
}
