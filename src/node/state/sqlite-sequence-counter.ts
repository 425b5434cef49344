import type { SequenceCounter } from "../../core/conversation/sequence-counter.js";
import type { StateDb } from "./sqlite-state.js";

/** Reply sequence numbers kept in the state database, so numbering survives restarts. */
export function createSqliteSequenceCounter(db: StateDb): SequenceCounter {
  const bump = db.prepare(
    "INSERT INTO sequences (conversation, last) VALUES (?, ?) ON CONFLICT (conversation) DO UPDATE SET last = last + excluded.last RETURNING last",
  );
  return {
    reserve(key, count) {
      const row = bump.get(key, count) as { last: number };
      return Promise.resolve(row.last - count + 1);
    },
  };
}
