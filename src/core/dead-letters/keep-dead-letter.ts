import type { Logger } from "../log/logger.js";
import type { DeadLetter } from "./dead-letter.js";
import type { KeptWithin } from "./dead-letter-store.js";

/**
 * Letters one keep deletes at most past its channel's bound: a table that grew past it (an older
 * version kept every letter without `admin`, a bound lowered) shrinks by that much per letter
 * kept, in statements that stay short, rather than in one that holds the store for seconds.
 */
export const MAX_TRIMMED_PER_KEEP = 1_000;

/** The per-channel bound of dead letters (`admin.max_dead_letters`) and where its warning goes. */
export interface DeadLetterBound {
  readonly max: number;
  readonly logger: Logger;
}

/**
 * Keeps a new dead letter within its channel's bound, and logs the one warning an operator
 * sees when the oldest had to go (with how many, and how many ever), so that letters are never
 * dropped silently. Every runtime keeps its letters through here: Node's job queue after each
 * dead letter, the Durable Object for each letter of the dead-letter queue. The store answers
 * at once (memory, SQLite, the object's own tables); Postgres's answer goes to {@link warnOverBound}.
 */
export function keepDeadLetter(
  store: { keep(letter: DeadLetter, max: number): KeptWithin },
  letter: DeadLetter,
  bound: DeadLetterBound,
): KeptWithin {
  return warnOverBound(store.keep(letter, bound.max), letter, bound);
}

/** Logs the warning of {@link keepDeadLetter} when keeping `letter` dropped older ones. */
export function warnOverBound(kept: KeptWithin, letter: DeadLetter, bound: DeadLetterBound): KeptWithin {
  if (kept.dropped > 0 && kept.maxCharacters !== undefined) {
    bound.logger.warn("dead letters over the characters a channel keeps in memory: the oldest were dropped", {
      channel: letter.job.message.channel,
      max_characters: kept.maxCharacters,
      dropped: kept.dropped,
      dropped_total: kept.droppedTotal,
    });
  } else if (kept.dropped > 0) {
    bound.logger.warn("dead letters over admin.max_dead_letters: the oldest were dropped", {
      channel: letter.job.message.channel,
      max_dead_letters: bound.max,
      dropped: kept.dropped,
      dropped_total: kept.droppedTotal,
    });
  }
  return kept;
}
