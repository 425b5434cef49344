import type { StoredDeadLetter } from "../../../core/admin/dead-letter-item.js";
import type { DeadLetter } from "../../../core/dead-letters/dead-letter.js";
import type { ImmediateDeadLetterStore } from "../../../core/dead-letters/dead-letter-store.js";
import { MAX_TRIMMED_PER_KEEP } from "../../../core/dead-letters/keep-dead-letter.js";
import { subjectOf } from "../../../core/timeline/timeline-recorder.js";
import { replayDeadLetters } from "./dead-letters.js";
import type { StateDb } from "./sqlite-state.js";

interface Row {
  readonly id: string;
  readonly channel: string;
  readonly letter: string;
}

/**
 * The dead letters of `state_dir`: the `dead_letters` table. The job queue's store writes each
 * letter there as the job dies (in the transaction that removes the job); `keep` then only bounds
 * the channel: writing the letter again would bring it back if a replay took it in between. A replay goes the way of `dead-letters replay` (the job stored in
 * state `replay`, which the running service's one-second poll puts back on its queue), so it
 * survives a crash in between. The dropped total counts since this process started.
 */
export function createSqliteDeadLetterStore(db: StateDb): ImmediateDeadLetterStore {
  const trim = db.prepare(
    `DELETE FROM dead_letters WHERE id IN (
       SELECT id FROM dead_letters WHERE channel = ? ORDER BY died_at DESC, id DESC LIMIT ${MAX_TRIMMED_PER_KEEP} OFFSET ?)`,
  );
  const page = db.prepare(
    `SELECT id, channel, letter FROM dead_letters
     WHERE (@channel IS NULL OR channel = @channel)
       AND (@after IS NULL OR died_at > @after OR (died_at = @after AND id > @id))
     ORDER BY died_at, id LIMIT @limit`,
  );
  const one = db.prepare("SELECT id, channel, letter FROM dead_letters WHERE id = ?");
  const remove = db.prepare("DELETE FROM dead_letters WHERE id = ?");
  const count = db.prepare("SELECT count(*) AS n FROM dead_letters");
  let droppedTotal = 0;
  return {
    keep(letter, max) {
      const dropped = trim.run(letter.job.message.channel, max).changes;
      if (dropped === 0) return { dropped: 0, droppedTotal: 0 };
      droppedTotal += dropped;
      return { dropped, droppedTotal };
    },
    page(query) {
      const rows = page.all({
        channel: query.channel,
        after: query.after?.diedAt ?? null,
        id: query.after?.id ?? "",
        limit: query.limit + 1,
      }) as Row[];
      return { letters: rows.slice(0, query.limit).map(stored), more: rows.length > query.limit };
    },
    one(id) {
      const row = one.get(id) as Row | undefined;
      return row === undefined ? undefined : stored(row);
    },
    remove: (id) => remove.run(id).changes > 0,
    replay: (filter) => replayDeadLetters(db, filter).map((row) => subjectOf(row.letter.job.message)),
    count: () => (count.get() as { n: number }).n,
  };
}

function stored(row: Row): StoredDeadLetter {
  return { id: row.id, channel: row.channel, letter: JSON.parse(row.letter) as DeadLetter };
}
