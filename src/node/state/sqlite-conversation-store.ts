import type { ConversationStore, ConversationTurn } from "../../core/conversation/conversation-store.js";
import type { StateDb } from "./sqlite-state.js";

/** Conversation memory in the state database, keeping the last `maxTurns` turns per conversation. */
export function createSqliteConversationStore(db: StateDb, maxTurns = 100): ConversationStore {
  const select = db.prepare(
    "SELECT turn FROM (SELECT seq, turn FROM turns WHERE conversation = ? ORDER BY seq DESC LIMIT ?) ORDER BY seq",
  );
  const insert = db.prepare("INSERT INTO turns (conversation, turn, at) VALUES (?, ?, ?)");
  const trim = db.prepare(
    "DELETE FROM turns WHERE conversation = ? AND seq <= (SELECT seq FROM turns WHERE conversation = ? ORDER BY seq DESC LIMIT 1 OFFSET ?)",
  );
  const append = db.transaction((key: string, turns: readonly ConversationTurn[]) => {
    for (const turn of turns) insert.run(key, JSON.stringify(turn), turn.at);
    trim.run(key, key, maxTurns);
  });
  return {
    history(key, limit) {
      if (limit <= 0) return Promise.resolve([]);
      const rows = select.all(key, limit) as { turn: string }[];
      return Promise.resolve(rows.map((row) => JSON.parse(row.turn) as ConversationTurn));
    },
    append(key, turns) {
      append(key, turns);
      return Promise.resolve();
    },
  };
}
