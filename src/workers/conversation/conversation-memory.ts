import type { ConversationStore, ConversationTurn } from "../../core/conversation/conversation-store.js";
import type { Mutable } from "../../core/mutable.js";
import type { MeteredSql } from "../metered-sql.js";

/** Turns kept per conversation; older ones are deleted as new ones arrive. */
export const MAX_TURNS = 100;

type TurnRow = {
  role: string;
  text: string | null;
  media_url: string | null;
  media_type: string | null;
  at: number;
};

/**
 * One conversation's memory, the `turns` table of its Durable Object and its only writer:
 * served to other Workers over RPC, and to the consumer that runs inside the object as the
 * core's ConversationStore (whose key is this conversation's, so it is not needed). SQL calls
 * are synchronous, so nothing interleaves within one. The reply counter is in
 * `conversation-counters.ts`.
 */
export class ConversationMemory {
  constructor(private readonly sql: MeteredSql) {}

  /** The last `limit` turns (at most {@link MAX_TURNS}), oldest first. */
  history(limit: number): ConversationTurn[] {
    if (!(limit > 0)) return [];
    return this.sql
      .all<TurnRow>(
        "SELECT role, text, media_url, media_type, at FROM (SELECT * FROM turns ORDER BY seq DESC LIMIT ?) ORDER BY seq ASC",
        Math.min(Math.floor(limit), MAX_TURNS),
      )
      .map(toTurn);
  }

  /** Appends turns in order and drops all but the last {@link MAX_TURNS}. */
  append(turns: readonly ConversationTurn[]): void {
    for (const turn of turns) {
      this.sql.run(
        "INSERT INTO turns (role, text, media_url, media_type, at) VALUES (?, ?, ?, ?, ?)",
        turn.role,
        turn.text ?? null,
        turn.mediaUrl ?? null,
        turn.mediaType ?? null,
        turn.at,
      );
    }
    this.sql.run("DELETE FROM turns WHERE seq <= (SELECT MAX(seq) FROM turns) - ?", MAX_TURNS);
  }

  /** Forgets every turn (the conversation expired). */
  clear(): void {
    this.sql.run("DELETE FROM turns");
  }

  /** This memory as the core's store, for the consumer inside the object. */
  asStore(): ConversationStore {
    return {
      history: (_key, limit) => Promise.resolve(this.history(limit)),
      append: (_key, turns) => Promise.resolve(this.append(turns)),
    };
  }
}

function toTurn(row: TurnRow): ConversationTurn {
  const turn: Mutable<ConversationTurn> = {
    role: row.role === "assistant" ? "assistant" : "user",
    at: row.at,
  };
  if (row.text !== null) turn.text = row.text;
  if (row.media_url !== null) turn.mediaUrl = row.media_url;
  if (row.media_type !== null) turn.mediaType = row.media_type;
  return turn;
}
