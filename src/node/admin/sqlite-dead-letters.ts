import type { AdminDeadLetters } from "../../core/admin/dead-letter-admin.js";
import { decodeCursor, encodeCursor } from "../../core/admin/dead-letter-cursor.js";
import { deadLetterItem } from "../../core/admin/dead-letter-item.js";
import type { DeadLetter } from "../../core/delivery/dead-letter.js";
import { replayDeadLetters } from "../state/dead-letters.js";
import type { StateDb } from "../state/sqlite-state.js";

interface Row {
  readonly id: string;
  readonly channel: string;
  readonly letter: string;
  readonly died_at: number;
}

/**
 * The admin API over the `dead_letters` table of `state_dir`. A replay goes through the same
 * path as `dead-letters replay` (the job is stored in state `replay`), which the running
 * service's one-second poll puts back on its queue; so a replay survives a crash in between.
 */
export function createSqliteDeadLetters(db: StateDb): AdminDeadLetters {
  // The cursor is the (died_at, id) of the last item: the order is total, so no letter is
  // shown twice or skipped while others are added or removed between pages.
  const page = db.prepare(
    `SELECT id, channel, letter, died_at FROM dead_letters
     WHERE (@channel IS NULL OR channel = @channel)
       AND (@after IS NULL OR died_at > @after OR (died_at = @after AND id > @id))
     ORDER BY died_at, id LIMIT @limit`,
  );
  const one = db.prepare("SELECT id, channel, letter, died_at FROM dead_letters WHERE id = ?");
  const ofChannel = db.prepare("SELECT id FROM dead_letters WHERE @channel IS NULL OR channel = @channel");
  const remove = db.prepare("DELETE FROM dead_letters WHERE id = ?");
  const toItem = (row: Row) =>
    deadLetterItem({ id: row.id, channel: row.channel, letter: JSON.parse(row.letter) as DeadLetter });
  return {
    async list(query) {
      const after = query.cursor === undefined ? undefined : decodeCursor(query.cursor);
      const rows = page.all({
        channel: query.channel ?? null,
        after: after?.diedAt ?? null,
        id: after?.id ?? "",
        limit: query.limit + 1,
      }) as Row[];
      const shown = rows.slice(0, query.limit);
      const last = shown.at(-1);
      return {
        items: shown.map(toItem),
        nextCursor:
          rows.length > query.limit && last !== undefined ? encodeCursor({ diedAt: last.died_at, id: last.id }) : null,
      };
    },
    async get(id) {
      const row = one.get(id) as Row | undefined;
      return row === undefined ? undefined : toItem(row);
    },
    async replay(filter) {
      const known = new Set(
        (ofChannel.all({ channel: filter.channel ?? null }) as { id: string }[]).map((row) => row.id),
      );
      const ids = filter.ids === undefined ? [...known] : filter.ids.filter((id) => known.has(id));
      return ids.length === 0 ? 0 : replayDeadLetters(db, ids).length;
    },
    async delete(id) {
      return remove.run(id).changes > 0;
    },
  };
}

/**
 * Keeps at most `max` dead letters of `channel`, deleting the oldest; returns how many went.
 * Called after each new dead letter, so at most a few rows go at a time.
 */
export function trimSqliteDeadLetters(db: StateDb, channel: string, max: number): number {
  return db
    .prepare(
      `DELETE FROM dead_letters WHERE id IN (
         SELECT id FROM dead_letters WHERE channel = ? ORDER BY died_at DESC, id DESC LIMIT -1 OFFSET ?)`,
    )
    .run(channel, max).changes;
}
