import type { AdminDeadLetters } from "../../core/admin/dead-letter-admin.js";
import type { StoredDeadLetter } from "../../core/admin/dead-letter-item.js";
import { createAdminDeadLetters } from "../../core/dead-letters/create-admin-dead-letters.js";
import type { DeadLetter } from "../../core/dead-letters/dead-letter.js";
import type { DeadLetterStore } from "../../core/dead-letters/dead-letter-store.js";
import type { ReplayTimeline } from "../../core/dead-letters/replay-timeline.js";
import type { DeadLetterObject } from "./dead-letter-object.js";
import { DEAD_LETTER_STORE_NAME } from "./dead-letter-store-name.js";
import type { KeptLetter } from "./dead-letter-table.js";

/**
 * The dead-letter store on Workers: RPC calls to the one {@link DeadLetterObject}, whose letters
 * cross as JSON (a page is bounded by its characters there) and are read back here. A page may
 * hold fewer than `limit` letters when they are large; `more` then still leads to the rest.
 */
export function createDurableDeadLetterStore(namespace: DurableObjectNamespace<DeadLetterObject>): DeadLetterStore {
  // A fresh stub per call: a stub that saw certain errors cannot be used again.
  const store = () => namespace.get(namespace.idFromName(DEAD_LETTER_STORE_NAME));
  return {
    keep: (letter, max) => store().keepWithin(letter, max),
    async page(query) {
      const page = await store().page(query);
      return { letters: page.letters.map(readKept), more: page.more };
    },
    async one(id) {
      const kept = await store().one(id);
      return kept === null ? undefined : readKept(kept);
    },
    remove: (id) => store().remove(id),
    replay: (filter) => store().replay(filter),
    count: () => store().count(),
  };
}

/**
 * The admin API's dead letters on Workers, over {@link createDurableDeadLetterStore}; with a
 * timeline, each replay is recorded in its message's. Replays take letters of `channels` only.
 */
export function createDurableAdminDeadLetters(
  namespace: DurableObjectNamespace<DeadLetterObject>,
  timeline: ReplayTimeline | undefined,
  channels: readonly string[],
): AdminDeadLetters {
  return createAdminDeadLetters(createDurableDeadLetterStore(namespace), timeline, channels);
}

/** Whether the store kept a letter of `id` that died at `diedAt` (see `DeadLetterTable.knows`). */
export function deadLetterKnown(
  namespace: DurableObjectNamespace<DeadLetterObject>,
): (id: string, diedAt: number) => Promise<boolean> {
  return async (id, diedAt) => await namespace.get(namespace.idFromName(DEAD_LETTER_STORE_NAME)).knows(id, diedAt);
}

/** Counts the listed dead letters, for `/readyz`: one call to one object. */
export function countDeadLetters(namespace: DurableObjectNamespace<DeadLetterObject>): Promise<number> {
  return namespace.get(namespace.idFromName(DEAD_LETTER_STORE_NAME)).count();
}

function readKept(kept: KeptLetter): StoredDeadLetter {
  return { id: kept.id, channel: kept.channel, letter: JSON.parse(kept.letter) as DeadLetter };
}
