import { type DeadLetter, replayableJob } from "../../../core/dead-letters/dead-letter.js";
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
 * Moves dead letters back to the queue with fresh attempts. Replies already produced keep
 * their ids (and the brain is not asked again); a running service picks them up within a
 * second as far as the queue has room, a stopped one at its next start. Returns the ids re-queued.
 */
export function replayDeadLetters(db: StateDb, ids: readonly string[] | "all"): string[] {
  const rows = listDeadLetters(db).filter((row) => ids === "all" || ids.includes(row.id));
  const insert = db.prepare("INSERT OR REPLACE INTO jobs (id, job, state) VALUES (?, ?, 'replay')");
  const remove = db.prepare("DELETE FROM dead_letters WHERE id = ?");
  db.transaction(() => {
    for (const row of rows) {
      insert.run(row.id, JSON.stringify(replayableJob(row.letter)));
      remove.run(row.id);
    }
  })();
  return rows.map((row) => row.id);
}
