import type { AdminDeadLetters } from "../admin/dead-letter-admin.js";
import { decodeCursor, encodeCursor } from "../admin/dead-letter-cursor.js";
import type { StoredDeadLetter } from "../admin/dead-letter-item.js";
import { deadLetterItem } from "../admin/dead-letter-item.js";
import { subjectOf, type TimelineRecorder } from "../timeline/timeline-recorder.js";
import type { DeadLetterStore, ReplayFilter } from "./dead-letter-store.js";

/** Where replays are recorded in their messages' timelines. */
export interface ReplayTimeline {
  readonly recorder: TimelineRecorder;
  readonly now: () => number;
}

/** Largest page read while listing the letters a bulk replay takes. */
const REPLAY_PAGE = 500;

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
      if (timeline === undefined || !timeline.recorder.on) return await store.replay(filter);
      const letters = await replayedLetters(store, filter);
      const replayed = await store.replay(filter);
      // A replay that moved nothing (another one took the letters first) records nothing: its
      // letters may be delivered by now, and a later "replayed" would move them back.
      if (replayed === 0) return 0;
      const at = timeline.now();
      for (const { letter } of letters)
        timeline.recorder.record(subjectOf(letter.job.message), [{ type: "replayed", at }], "replayed");
      return replayed;
    },
    delete: async (id) => await store.remove(id),
  };
}

/** The letters `filter` takes, read before the replay moves them, for their timelines. */
async function replayedLetters(store: DeadLetterStore, filter: ReplayFilter): Promise<StoredDeadLetter[]> {
  if (filter.ids !== undefined) {
    const found = await Promise.all(filter.ids.map(async (id) => await store.one(id)));
    return found.filter(
      (letter): letter is StoredDeadLetter =>
        letter !== undefined && (filter.channel === undefined || letter.channel === filter.channel),
    );
  }
  const letters: StoredDeadLetter[] = [];
  let after: { diedAt: number; id: string } | null = null;
  for (;;) {
    const page = await store.page({ channel: filter.channel ?? null, after, limit: REPLAY_PAGE });
    letters.push(...page.letters);
    const last = page.letters.at(-1);
    if (!page.more || last === undefined) return letters;
    after = { diedAt: last.letter.diedAt, id: last.id };
  }
}
