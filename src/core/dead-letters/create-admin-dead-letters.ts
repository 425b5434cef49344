import type { AdminDeadLetters } from "../admin/dead-letter-admin.js";
import { decodeCursor, encodeCursor } from "../admin/dead-letter-cursor.js";
import { deadLetterItem } from "../admin/dead-letter-item.js";
import type { DeadLetterStore } from "./dead-letter-store.js";
import { channelNotConfiguredError, replayConfigured } from "./replay-configured.js";
import { type ReplayTimeline, recordReplays } from "./replay-timeline.js";

/**
 * The admin API's dead letters over any {@link DeadLetterStore}: the one pager. The cursor is
 * the (failure time, id) of a page's last letter; the order is total, so following
 * `nextCursor` shows no letter twice and skips none while others are added or removed between
 * pages (a letter added behind the cursor shows on a later page, one added before it does not).
 * With `channels`, a replay takes only letters of those channels ({@link replayConfigured}).
 */
export function createAdminDeadLetters(
  store: DeadLetterStore,
  timeline?: ReplayTimeline,
  channels?: readonly string[],
): AdminDeadLetters {
  return {
    async list(query) {
      // The routes refuse a cursor this service did not make; anything else starts at the top.
      const after = query.cursor === undefined ? undefined : decodeCursor(query.cursor);
      const page = await store.page({ channel: query.channel ?? null, after: after ?? null, limit: query.limit });
      const last = page.letters.at(-1);
      return {
        items: page.letters.map(deadLetterItem),
        nextCursor: page.more && last !== undefined ? encodeCursor({ diedAt: last.letter.diedAt, id: last.id }) : null,
      };
    },
    async get(id) {
      const stored = await store.one(id);
      return stored === undefined ? undefined : deadLetterItem(stored);
    },
    async replay(filter) {
      const { replayed, unconfigured } = await replayConfigured(store, filter, channels);
      recordReplays(timeline, replayed);
      // Named letters that all belong to channels no longer configured: say so, rather than
      // answer as if there were none.
      if (replayed.length === 0 && unconfigured.length > 0) {
        throw channelNotConfiguredError(unconfigured.map((letter) => letter.channel));
      }
      return replayed.length;
    },
    delete: async (id) => await store.remove(id),
  };
}
