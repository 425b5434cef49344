import type { AdminDeadLetters } from "../core/admin/dead-letter-admin.js";
import { decodeCursor, encodeCursor } from "../core/admin/dead-letter-cursor.js";
import { type DeadLetterItem, deadLetterItem } from "../core/admin/dead-letter-item.js";
import type { DeadLetter } from "../core/delivery/dead-letter.js";
import { DEAD_LETTER_STORE_NAME, type DeadLetterObject, type KeptLetter } from "./dead-letter-object.js";

/**
 * The admin API's dead letters on Workers: the {@link DeadLetterObject} that the dead-letter
 * queue's consumer keeps them in. A page may hold fewer than `limit` letters when they are
 * large (an RPC result is bounded); `next_cursor` then still leads to the rest.
 */
export function createDurableAdminDeadLetters(namespace: DurableObjectNamespace<DeadLetterObject>): AdminDeadLetters {
  const store = () => namespace.get(namespace.idFromName(DEAD_LETTER_STORE_NAME));
  return {
    async list(query) {
      const after = query.cursor === undefined ? undefined : decodeCursor(query.cursor);
      const page = await store().page({
        channel: query.channel ?? null,
        after: after ?? null,
        limit: query.limit,
      });
      const last = page.letters.at(-1);
      return {
        items: page.letters.map(toItem),
        nextCursor: page.more && last !== undefined ? encodeCursor({ diedAt: last.diedAt, id: last.id }) : null,
      };
    },
    async get(id) {
      const kept = await store().one(id);
      return kept === null ? undefined : toItem(kept);
    },
    replay: (filter) => store().replay(filter),
    delete: (id) => store().remove(id),
  };
}

/** Counts the listed dead letters, for `/readyz`: one call to one object. */
export function countDeadLetters(namespace: DurableObjectNamespace<DeadLetterObject>): Promise<number> {
  return namespace.get(namespace.idFromName(DEAD_LETTER_STORE_NAME)).count();
}

function toItem(kept: KeptLetter): DeadLetterItem {
  return deadLetterItem({ id: kept.id, channel: kept.channel, letter: JSON.parse(kept.letter) as DeadLetter });
}
