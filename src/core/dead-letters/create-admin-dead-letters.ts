import type { AdminDeadLetters } from "../admin/dead-letter-admin.js";
import { decodeCursor, encodeCursor } from "../admin/dead-letter-cursor.js";
import { deadLetterItem } from "../admin/dead-letter-item.js";
import type { TimelineRecorder } from "../timeline/timeline-recorder.js";
import type { DeadLetterStore } from "./dead-letter-store.js";

/** Where replays are recorded in their messages' timelines. */
export interface ReplayTimeline {
  readonly recorder: TimelineRecorder;
  readonly now: () => number;
}

/**
 * The admin API's dead letters over any {@link DeadLetterStore}: the one pager. The cursor is
 * the (failure time, id) of a page's last letter; the order is total, so following
 * `nextCursor` shows no letter twice and skips none while others are added or removed between
 * pages (a letter added behind the cursor shows on a later page, one added before it does not).
 */
export function createAdminDeadLetters(store: DeadLetterStore, timeline?: ReplayTimeline): AdminDeadLetters {
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
      // Recorded from what the store says it took, not from a list read before: a letter
      // deleted or replayed elsewhere meanwhile gets no "replayed", and one that another
      // replay took first (it may be delivered by now) is not moved back to "replayed".
      const replayed = await store.replay(filter);
      if (timeline?.recorder.on && replayed.length > 0) {
        const at = timeline.now();
        for (const letter of replayed) timeline.recorder.record(letter, [{ type: "replayed", at }], "replayed");
      }
      return replayed.length;
    },
    delete: async (id) => await store.remove(id),
  };
}
