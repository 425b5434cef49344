import type pg from "pg";
import type { ConversationStore, ConversationTurn } from "../../../core/conversation/conversation-store.js";
import {
  cutoffOf,
  DEFAULT_MEMORY_RETENTION,
  type MemoryRetention,
} from "../../../core/conversation/memory-retention.js";
import { type Logger, silentLogger } from "../../../core/log/logger.js";
import { asStateError } from "./postgres-state-error.js";
import { createTurnBatch } from "./postgres-turn-batch.js";

/** The Postgres conversation memory, whose appends can be waited for at close. */
export interface PostgresConversationStore extends ConversationStore {
  /** Resolves once the appends asked for before the call are committed (or failed). */
  flush(): Promise<void>;
}

interface Appended {
  readonly key: string;
  readonly turns: readonly ConversationTurn[];
  readonly resolve: () => void;
  readonly reject: (error: unknown) => void;
}

/**
 * The appends of one group and the trim that keeps `$4` turns per conversation, in one
 * statement. The trim cannot see the rows this statement inserts, so it keeps room for them:
 * of a conversation's stored turns, it keeps the newest `$4 - appended`; a group never appends
 * more than `$4` of a conversation (only its newest are sent).
 */
const APPEND_STATEMENT = `WITH appended AS (
  SELECT * FROM unnest($1::text[], $2::text[], $3::bigint[]) WITH ORDINALITY AS a(conversation, turn, at, n)
), inserted AS (
  INSERT INTO webhook_channel.turns (conversation, turn, at)
  SELECT conversation, turn, at FROM appended ORDER BY n
), counts AS (
  SELECT conversation, count(*) AS appended FROM appended GROUP BY conversation
)
DELETE FROM webhook_channel.turns WHERE seq IN (
  SELECT seq FROM (
    SELECT t.seq, c.appended, row_number() OVER (PARTITION BY t.conversation ORDER BY t.seq DESC) AS newest
    FROM webhook_channel.turns AS t JOIN counts AS c ON c.conversation = t.conversation
  ) AS ranked WHERE newest > $4 - appended
)`;

/**
 * Conversation memory in Postgres, keeping the last `maxTurns` turns per conversation; the
 * history leaves out turns older than the retention, which the backend's prune deletes
 * (`postgres-turn-prune.ts`). The
 * appends of an event-loop turn are one statement, resolved once it committed, so that the
 * next message of the conversation (on whichever replica) reads them.
 */
export function createPostgresConversationStore(
  pool: pg.Pool,
  maxTurns = 100,
  logger: Logger = silentLogger,
  retention: MemoryRetention = DEFAULT_MEMORY_RETENTION,
): PostgresConversationStore {
  let appended: Appended[] = [];
  const batch = createTurnBatch(() => {
    if (appended.length === 0) return undefined;
    const taken = appended;
    appended = [];
    const rows: [string[], string[], number[]] = [[], [], []];
    // Newest first, at most `maxTurns` per conversation (see APPEND_STATEMENT), then put back in order.
    const left = new Map<string, number>();
    for (let entry = taken.length - 1; entry >= 0; entry -= 1) {
      const { key, turns } = taken[entry] ?? { key: "", turns: [] };
      for (let index = turns.length - 1; index >= 0; index -= 1) {
        const turn = turns[index];
        const room = left.get(key) ?? maxTurns;
        if (turn === undefined || room <= 0) continue;
        left.set(key, room - 1);
        rows[0].push(key);
        rows[1].push(JSON.stringify(turn));
        rows[2].push(turn.at);
      }
    }
    for (const column of rows) column.reverse();
    const written = rows[0].length === 0 ? Promise.resolve() : pool.query(APPEND_STATEMENT, [...rows, maxTurns]);
    return written.then(
      () => {
        for (const entry of taken) entry.resolve();
      },
      (error: unknown) => {
        const refusal = asStateError(error);
        for (const entry of taken) entry.reject(refusal);
      },
    );
  }, logger);
  return {
    async history(key, limit) {
      if (limit <= 0) return [];
      try {
        const result = await pool.query<{ turn: string }>(
          `SELECT turn FROM (
             SELECT seq, turn FROM webhook_channel.turns WHERE conversation = $1 AND at >= $3
             ORDER BY seq DESC LIMIT $2
           ) AS newest ORDER BY seq`,
          [key, limit, cutoffOf(retention)],
        );
        return result.rows.map((row) => JSON.parse(row.turn) as ConversationTurn);
      } catch (error) {
        throw asStateError(error);
      }
    },
    append(key, turns) {
      return new Promise<void>((resolve, reject) => {
        appended.push({ key, turns, resolve, reject });
        batch.soon();
      });
    },
    flush: () => batch.flush(),
  };
}
