import { DEFAULT_CONVERSATION_RETENTION_HOURS } from "../../core/config/conversation-memory-schema.js";
import type { ConversationStore, ConversationTurn } from "../../core/conversation/conversation-store.js";
import { retentionCutoff } from "../../core/conversation/memory-retention.js";
import type { Mutable } from "../../core/mutable.js";
import type { MeteredSql } from "../metered-sql.js";

/** Turns kept per conversation; older ones are deleted as new ones arrive. */
export const MAX_TURNS = 100;

/**
 * Longest text of a turn kept, in UTF-16 code units: a Durable Object holds at most 2 MB in one
 * row, and a code unit is at most 3 bytes of UTF-8. A longer one (a brain's answer of megabytes)
 * is kept cut, so that the history still carries the turn and the reply is not held back by it.
 */
export const MAX_TURN_CHARS = 500_000;

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
 *
 * Turns older than `conversation_memory.retention_hours` (`retentionHours`, read when needed)
 * are left out of the history and deleted by the next append. The whole conversation still goes
 * when it expires (`conversation-expiry.ts`), whatever the retention.
 */
export class ConversationMemory {
  constructor(
    private readonly sql: MeteredSql,
    private readonly retentionHours: () => number = () => DEFAULT_CONVERSATION_RETENTION_HOURS,
    private readonly now: () => number = () => Date.now(),
  ) {}

  /** The last `limit` turns within the retention (at most {@link MAX_TURNS}), oldest first. */
  history(limit: number): ConversationTurn[] {
    if (!(limit > 0)) return [];
    return this.sql
      .all<TurnRow>(
        "SELECT role, text, media_url, media_type, at FROM (SELECT * FROM turns WHERE at >= ? ORDER BY seq DESC LIMIT ?) ORDER BY seq ASC",
        this.cutoff(),
        Math.min(Math.floor(limit), MAX_TURNS),
      )
      .map(toTurn);
  }

  /**
   * Appends turns in order, drops all but the last {@link MAX_TURNS}, and deletes the turns
   * older than the retention. Turns arrive in time order, so the old ones come first: they are
   * the turns before the first one retained, found without reading the rest (a turn stored out
   * of time order stays out of the history until the trim takes it).
   */
  append(turns: readonly ConversationTurn[]): void {
    for (const turn of turns) {
      this.sql.run(
        "INSERT INTO turns (role, text, media_url, media_type, at) VALUES (?, ?, ?, ?, ?)",
        turn.role,
        turn.text === undefined ? null : keptText(turn.text),
        turn.mediaUrl ?? null,
        turn.mediaType ?? null,
        turn.at,
      );
    }
    this.sql.run("DELETE FROM turns WHERE seq <= (SELECT MAX(seq) FROM turns) - ?", MAX_TURNS);
    this.sql.run(
      `DELETE FROM turns WHERE seq < coalesce(
         (SELECT seq FROM turns WHERE at >= ? ORDER BY seq LIMIT 1), (SELECT MAX(seq) FROM turns) + 1)`,
      this.cutoff(),
    );
  }

  /** The oldest `at` still retained now. */
  private cutoff(): number {
    return retentionCutoff(this.now(), this.retentionHours());
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

/** A turn's text as stored: whole, or cut at {@link MAX_TURN_CHARS}, never between a surrogate pair's halves. */
function keptText(text: string): string {
  if (text.length <= MAX_TURN_CHARS) return text;
  const last = text.charCodeAt(MAX_TURN_CHARS - 1);
  return text.slice(0, last >= 0xd800 && last <= 0xdbff ? MAX_TURN_CHARS - 1 : MAX_TURN_CHARS);
}
