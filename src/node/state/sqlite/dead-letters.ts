import { type DeadLetter, replayableJob } from "../../../core/dead-letters/dead-letter.js";
import type { ReplayFilter } from "../../../core/dead-letters/dead-letter-store.js";
import type { StateDb } from "./sqlite-state.js";

/** One dead letter as `dead-letters list` shows it. */
export interface DeadLetterRow {
  readonly id: string;
  readonly channel: string;
  readonly letter: DeadLetter;
}

/** Every dead letter in the state database, oldest first. */
export function listDeadLetters(db: StateDb): DeadLetterRow[] {
  const rows = db.prepare("SELECT id, channel, letter FROM dead_letters ORDER BY died_at, id").all() as {
    id: string;
    channel: string;
    letter: string;
  }[];
  return rows.map((row) => ({ id: row.id, channel: row.channel, letter: JSON.parse(row.letter) as DeadLetter }));
}

/**
 * Moves dead letters back to the queue with fresh attempts: all of them, those of
 * `filter.channel`, those in `filter.ids`. Replies already produced keep their ids (and the
 * brain is not asked again); a running service picks them up within a second as far as the
 * queue has room, a stopped one at its next start. Returns the letters it moved, oldest first:
 * read and moved in one immediate transaction, so that a letter another process (the CLI, a
 * second admin call) deleted or replayed first is neither moved nor returned.
 */
export function replayDeadLetters(db: StateDb, filter: ReplayFilter): DeadLetterRow[] {
  const chosen = db.prepare(
    `SELECT id, channel, letter FROM dead_letters
     WHERE (@channel IS NULL OR channel = @channel)
       AND (@ids IS NULL OR id IN (SELECT value FROM json_each(@ids)))
       AND (@channels IS NULL OR channel IN (SELECT value FROM json_each(@channels)))
     ORDER BY died_at, id`,
  );
  const insert = db.prepare("INSERT OR REPLACE INTO jobs (id, job, state) VALUES (?, ?, 'replay')");
  const remove = db.prepare("DELETE FROM dead_letters WHERE id = ?");
  const move = db.transaction((): DeadLetterRow[] => {
    const rows = chosen.all({
      channel: filter.channel ?? null,
      ids: filter.ids === undefined ? null : JSON.stringify(filter.ids),
      channels: filter.channels === undefined ? null : JSON.stringify(filter.channels),
    }) as { id: string; channel: string; letter: string }[];
    return rows.map((row) => {
      const letter = JSON.parse(row.letter) as DeadLetter;
      // In the list's order, which becomes the order of the jobs in their lanes.
      insert.run(row.id, JSON.stringify(replayableJob(letter)));
      remove.run(row.id);
      return { id: row.id, channel: row.channel, letter };
    });
  });
  return move.immediate();
}
