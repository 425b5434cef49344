import type { Logger } from "../log/logger.js";
import type { DeadLetter } from "./dead-letter.js";
import type { KeptWithin } from "./dead-letter-store.js";

/** The per-channel bound of dead letters (`admin.max_dead_letters`) and where its warning goes. */
export interface DeadLetterBound {
  readonly max: number;
  readonly logger: Logger;
}

/**
 * Keeps a new dead letter within its channel's bound, and logs the one warning an operator
 * sees when the oldest had to go (with how many, and how many ever), so that letters are never
 * dropped silently. Every runtime keeps its letters through here: Node's job queue after each
 * dead letter, the Durable Object for each letter of the dead-letter queue. The store must
 * answer at once (Node's stores, the object's own tables), which keeps Node's hook synchronous.
 */
export function keepDeadLetter(
  store: { keep(letter: DeadLetter, max: number): KeptWithin },
  letter: DeadLetter,
  bound: DeadLetterBound,
): KeptWithin {
  const kept = store.keep(letter, bound.max);
  if (kept.dropped > 0) {
    bound.logger.warn("dead letters over admin.max_dead_letters: the oldest were dropped", {
      channel: letter.job.message.channel,
      max_dead_letters: bound.max,
      dropped: kept.dropped,
      dropped_total: kept.droppedTotal,
    });
  }
  return kept;
}
