import { conversationKey } from "../../../core/conversation/conversation-store.js";
import type { StateDb } from "./state-db.js";

/**
 * Counters a pass reads per transaction. Each batch is a transaction of its own, and the pass
 * yields to the event loop between them: a table of millions of conversations is walked in
 * slices that neither hold the file's write lock long nor keep messages waiting behind it.
 */
export const SQLITE_IDLE_LANE_BATCH = 1_000;

/** What a pass over the counters needs besides the file. */
export interface IdleLanePass {
  /** Refuses the batch (throws) when another process took the file over, as every write does. */
  readonly fence: () => void;
  /** The lanes whose counters a batch deleted, once it committed: caches of their numbers go. */
  readonly forgotten: (keys: readonly string[]) => void;
  readonly batch?: number;
}

/**
 * Deletes the reply counter (`sequences`) of every conversation last numbered before `cutoff`
 * (epoch milliseconds, from `idleCutoff`; a job that ended long after its numbering stamped its
 * end) that has no job stored (waiting, held or replayed): its next reply is numbered 1 again.
 * The conversations with stored jobs are read once, at the start: a message of an idle conversation accepted during the pass may find its counter gone,
 * which is what its idleness called for anyway. Stops early, without an error, once the
 * database is closed. Resolves with the number of counters deleted.
 */
export async function forgetIdleSqliteLanes(db: StateDb, cutoff: number, pass: IdleLanePass): Promise<number> {
  const batch = pass.batch ?? SQLITE_IDLE_LANE_BATCH;
  const stored = db.prepare<[number, number], { seq: number; channel: unknown; conversation: unknown }>(
    `SELECT seq, json_extract(job, '$.message.channel') AS channel,
            json_extract(job, '$.message.message.conversationId') AS conversation
     FROM jobs WHERE seq > ? ORDER BY seq LIMIT ?`,
  );
  // By rowid rather than through an index on the time: a message's commit then pays for no
  // second index, and the pass reads each counter once.
  const scan = db.prepare<[number, number], { id: number; conversation: string; used_at: number }>(
    "SELECT rowid AS id, conversation, used_at FROM sequences WHERE rowid > ? ORDER BY rowid LIMIT ?",
  );
  const remove = db.prepare<[number]>("DELETE FROM sequences WHERE rowid = ?");
  // Read in slices too: a receiver's outage may hold a large backlog.
  const waiting = new Set<string>();
  for (let seq = 0; db.open; await yieldTurn()) {
    const rows = stored.all(seq, batch);
    for (const row of rows) {
      if (typeof row.channel === "string" && typeof row.conversation === "string") {
        waiting.add(conversationKey(row.channel, row.conversation));
      }
    }
    const last = rows.at(-1);
    if (last === undefined || rows.length < batch) break;
    seq = last.seq;
  }
  const slice = db.transaction((after: number) => {
    pass.fence();
    const rows = scan.all(after, batch);
    const keys: string[] = [];
    for (const row of rows) {
      if (row.used_at >= cutoff || waiting.has(row.conversation)) continue;
      remove.run(row.id);
      keys.push(row.conversation);
    }
    return { next: rows.at(-1)?.id, keys, read: rows.length };
  });
  let deleted = 0;
  let after = 0;
  while (db.open) {
    const { next, keys, read } = slice.immediate(after);
    if (keys.length > 0) pass.forgotten(keys);
    deleted += keys.length;
    // A slice short of full was the last.
    if (next === undefined || read < batch) break;
    after = next;
    await yieldTurn();
  }
  return deleted;
}

/** Lets the event loop run what waits (messages, commits) before the next slice. */
const yieldTurn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));
