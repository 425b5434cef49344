import type { ConversationStore, ConversationTurn } from "../../../core/conversation/conversation-store.js";
import {
  cutoffOf,
  DEFAULT_MEMORY_RETENTION,
  type MemoryRetention,
} from "../../../core/conversation/memory-retention.js";
import { silentLogger } from "../../../core/log/logger.js";
import { createGroupCommit, type GroupCommit } from "./sqlite-group-commit.js";
import type { StateDb } from "./sqlite-state.js";

interface Appended {
  readonly key: string;
  readonly turns: readonly ConversationTurn[];
  readonly resolve: () => void;
  readonly reject: (error: unknown) => void;
}

/**
 * Conversation memory in the state database, keeping the last `maxTurns` turns per
 * conversation; the history leaves out turns older than the retention, which the backend's
 * prune deletes (`sqlite-turn-prune.ts`). Appends join the connection's group commit (see {@link GroupCommit}) and
 * resolve once it committed, so that the next message of the conversation reads them.
 */
export function createSqliteConversationStore(
  db: StateDb,
  maxTurns = 100,
  group: GroupCommit = createGroupCommit(db, silentLogger),
  retention: MemoryRetention = DEFAULT_MEMORY_RETENTION,
): ConversationStore {
  const select = db.prepare(
    "SELECT turn FROM (SELECT seq, turn FROM turns WHERE conversation = ? AND at >= ? ORDER BY seq DESC LIMIT ?) ORDER BY seq",
  );
  const insert = db.prepare("INSERT INTO turns (conversation, turn, at) VALUES (?, ?, ?)");
  const trim = db.prepare(
    "DELETE FROM turns WHERE conversation = ? AND seq <= (SELECT seq FROM turns WHERE conversation = ? ORDER BY seq DESC LIMIT 1 OFFSET ?)",
  );
  let appended: Appended[] = [];
  const part = {
    take() {
      if (appended.length === 0) return undefined;
      const taken = appended;
      appended = [];
      return {
        write() {
          const keys = new Set<string>();
          for (const { key, turns } of taken) {
            for (const turn of turns) insert.run(key, JSON.stringify(turn), turn.at);
            keys.add(key);
          }
          // Once per conversation, after all its turns of the group.
          for (const key of keys) trim.run(key, key, maxTurns);
        },
        settled(error: unknown) {
          for (const entry of taken) {
            if (error === undefined) entry.resolve();
            else entry.reject(error);
          }
        },
      };
    },
  };
  return {
    history(key, limit) {
      if (limit <= 0) return Promise.resolve([]);
      const rows = select.all(key, cutoffOf(retention), limit) as { turn: string }[];
      return Promise.resolve(rows.map((row) => JSON.parse(row.turn) as ConversationTurn));
    },
    append(key, turns) {
      return new Promise<void>((resolve, reject) => {
        appended.push({ key, turns, resolve, reject });
        group.soon(part);
      });
    },
  };
}
