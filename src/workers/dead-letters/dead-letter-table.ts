import type { DeadLetter } from "../../core/dead-letters/dead-letter.js";
import type {
  DeadLetterPageQuery,
  KeptWithin,
  ReplayedLetter,
  ReplayFilter,
} from "../../core/dead-letters/dead-letter-store.js";
import { subjectOf } from "../../core/timeline/timeline-recorder.js";
import type { MeteredSql } from "../metered-sql.js";
import { piecesOf } from "../sqlite-pieces.js";

/** A page stops early past this many characters: an RPC result must stay well under its 32 MiB limit. */
const PAGE_CHARS = 4_000_000;

/**
 * How long a letter that was replayed or deleted is remembered: the dead-letter queue delivers
 * at least once, and a copy of its message arriving later must not list the letter again.
 */
const GONE_KEPT_MS = 7 * 86_400_000;

/** Tombstones older than {@link GONE_KEPT_MS} are pruned at most this often. */
const PRUNE_EVERY_MS = 3_600_000;

/** One kept dead letter: its id (the message's), channel, failure time and the letter as JSON. */
export interface KeptLetter {
  readonly id: string;
  readonly channel: string;
  /** Epoch ms. */
  readonly diedAt: number;
  /** The core {@link DeadLetter}, as JSON. */
  readonly letter: string;
}

/** A stored letter as its row has it: the first piece in `letter`, the rest in `dead_letter_pieces`. */
export type LetterRow = { id: string; channel: string; died_at: number; pieces: number; letter: string };

/** A letter just marked for a replay: its message's subject, when its JSON is one piece. */
type MarkedSubject = { id: string; channel: string; conversation_id: SqlStorageValue; received_at: SqlStorageValue };

/** A letter being replayed: when the replay was asked for, and its failed hand-backs. */
export type MarkedRow = LetterRow & { marked_at: number; tries: number };

/**
 * The dead-letter store's tables (see `dead-letter-schema.ts`), read and written at once: what
 * the dead-letter object keeps letters in through the core's `keepDeadLetter`, lists from over
 * RPC, and replays from on its alarm. It is the only writer of these tables, so the count of
 * listed letters is kept in memory once read.
 */
export class DeadLetterTable {
  /** Listed letters, counted once and then kept up to date, so that `/readyz` probes read no rows. */
  private listed: number | undefined;
  private prunedAt = 0;

  constructor(private readonly sql: MeteredSql) {}

  /**
   * Keeps a letter and bounds its channel's listed letters to `max`, the oldest going first. A
   * letter already here, or replayed or deleted within {@link GONE_KEPT_MS}, is replaced only by
   * a later death of its message (a replay that failed again).
   */
  /** Whether the letter of `id` that died at `diedAt` (or a later death) is here, or was replayed or deleted. */
  knows(id: string, diedAt: number): boolean {
    // MAX over no rows is NULL: a letter never seen before.
    const known = this.sql.first<{ died_at: number | null }>(
      "SELECT MAX(died_at) AS died_at FROM (SELECT died_at FROM dead_letters WHERE id = ?1 UNION ALL SELECT died_at FROM gone WHERE id = ?1)",
      id,
    )?.died_at;
    return known !== null && known !== undefined && known >= diedAt;
  }

  keep(letter: DeadLetter, max: number): KeptWithin {
    const id = letter.job.message.id;
    const { channel } = letter.job.message;
    if (this.knows(id, letter.diedAt)) return { dropped: 0, droppedTotal: 0 };
    const pieces = piecesOf(JSON.stringify(letter));
    this.forget(id);
    this.sql.run(
      "INSERT INTO dead_letters (id, channel, died_at, pieces, letter) VALUES (?, ?, ?, ?, ?)",
      id,
      channel,
      letter.diedAt,
      pieces.length,
      pieces[0] ?? "",
    );
    for (const [piece, data] of pieces.entries()) {
      if (piece > 0) this.sql.run("INSERT INTO dead_letter_pieces (id, piece, data) VALUES (?, ?, ?)", id, piece, data);
    }
    this.listed = undefined;
    this.pruneGone();
    const over = this.sql.all<{ id: string }>(
      "SELECT id FROM dead_letters WHERE channel = ? AND replay_at IS NULL ORDER BY died_at DESC, id DESC LIMIT -1 OFFSET ?",
      channel,
      max,
    );
    if (over.length === 0) return { dropped: 0, droppedTotal: 0 };
    for (const row of over) this.forget(row.id);
    const total = this.sql.first<{ value: number }>(
      "INSERT INTO counters (name, value) VALUES ('dropped', ?1) ON CONFLICT (name) DO UPDATE SET value = value + ?1 RETURNING value",
      over.length,
    );
    return { dropped: over.length, droppedTotal: total?.value ?? over.length };
  }

  /** A page of listed letters (not being replayed), oldest first; `more` when others follow. */
  page(query: DeadLetterPageQuery): { letters: KeptLetter[]; more: boolean } {
    const after = query.after ?? { diedAt: -1, id: "" };
    const where = "replay_at IS NULL AND (died_at > ?1 OR (died_at = ?1 AND id > ?2))";
    const rows =
      query.channel === null
        ? this.sql.all<LetterRow>(
            `SELECT id, channel, died_at, pieces, letter FROM dead_letters WHERE ${where} ORDER BY died_at, id LIMIT ?3`,
            after.diedAt,
            after.id,
            query.limit + 1,
          )
        : this.sql.all<LetterRow>(
            `SELECT id, channel, died_at, pieces, letter FROM dead_letters WHERE channel = ?4 AND ${where} ORDER BY died_at, id LIMIT ?3`,
            after.diedAt,
            after.id,
            query.limit + 1,
            query.channel,
          );
    const letters: KeptLetter[] = [];
    let chars = 0;
    for (const row of rows.slice(0, query.limit)) {
      const kept = this.whole(row);
      if (letters.length > 0 && chars + kept.letter.length > PAGE_CHARS) return { letters, more: true };
      chars += kept.letter.length;
      letters.push(kept);
    }
    return { letters, more: rows.length > query.limit };
  }

  /** One listed letter, or null (unknown, or being replayed). */
  one(id: string): KeptLetter | null {
    const row = this.sql.first<LetterRow>(
      "SELECT id, channel, died_at, pieces, letter FROM dead_letters WHERE id = ? AND replay_at IS NULL",
      id,
    );
    return row === undefined ? null : this.whole(row);
  }

  /** Listed letters, those being replayed not included. */
  count(): number {
    this.listed ??=
      this.sql.first<{ n: number }>("SELECT COUNT(*) AS n FROM dead_letters WHERE replay_at IS NULL")?.n ?? 0;
    return this.listed;
  }

  /** Forgets a listed letter; false when there is none with this id. */
  remove(id: string): boolean {
    const listed = this.sql.first("SELECT id FROM dead_letters WHERE id = ? AND replay_at IS NULL", id);
    if (listed === undefined) return false;
    this.bury(id);
    return true;
  }

  /**
   * Marks listed letters for a replay asked for `now` (they leave the list); returns the
   * letters it marked. Their subjects are read in the statement that marks them, from the
   * letter's JSON when it is one piece; a letter kept in pieces (rare: a large one) is read
   * whole afterwards, as the replay still holds it.
   */
  mark(filter: ReplayFilter, now: number): ReplayedLetter[] {
    const marked = this.sql.all<MarkedSubject>(
      `UPDATE dead_letters SET replay_at = ?1, marked_at = ?1, tries = 0 WHERE replay_at IS NULL
         AND (?2 IS NULL OR channel = ?2)
         AND (?3 IS NULL OR id IN (SELECT value FROM json_each(?3)))
         AND (?4 IS NULL OR channel IN (SELECT value FROM json_each(?4)))
       RETURNING id, channel,
         CASE WHEN pieces <= 1 THEN json_extract(letter, '$.job.message.message.conversationId') END AS conversation_id,
         CASE WHEN pieces <= 1 THEN json_extract(letter, '$.job.message.receivedAt') END AS received_at`,
      now,
      filter.channel ?? null,
      filter.ids === undefined ? null : JSON.stringify(filter.ids),
      filter.channels === undefined ? null : JSON.stringify(filter.channels),
    );
    if (marked.length > 0) this.listed = undefined;
    return marked.map((row) => this.replayedLetter(row));
  }

  /** Marked letters whose hand-back is due at `now`, at most `limit`, in the order they were marked. */
  due(now: number, limit: number): MarkedRow[] {
    return this.sql.all<MarkedRow>(
      "SELECT id, channel, died_at, pieces, letter, marked_at, tries FROM dead_letters WHERE replay_at <= ? ORDER BY replay_at, died_at, id LIMIT ?",
      now,
      limit,
    );
  }

  /** When the replay of a letter was asked for: null when listed, undefined when it is gone. */
  markedAt(id: string): number | null | undefined {
    return this.sql.first<{ marked_at: number | null }>("SELECT marked_at FROM dead_letters WHERE id = ?", id)
      ?.marked_at;
  }

  /** Sets the next hand-back of a letter being replayed, after `tries` failed ones. */
  retryAt(id: string, at: number, tries: number): void {
    this.sql.run("UPDATE dead_letters SET replay_at = ?, tries = ? WHERE id = ?", at, tries, id);
  }

  /** The time of the next hand-back due, if any letter is being replayed. */
  nextReplayAt(): number | undefined {
    return (
      this.sql.first<{ at: number | null }>("SELECT MIN(replay_at) AS at FROM dead_letters WHERE replay_at IS NOT NULL")
        ?.at ?? undefined
    );
  }

  /** Puts a letter being replayed back on the list. */
  relist(id: string): void {
    this.sql.run("UPDATE dead_letters SET replay_at = NULL, marked_at = NULL, tries = 0 WHERE id = ?", id);
    this.listed = undefined;
  }

  /** Forgets a letter that was replayed or deleted, and remembers that it went (see {@link GONE_KEPT_MS}). */
  bury(id: string): void {
    const row = this.sql.first<{ died_at: number }>("SELECT died_at FROM dead_letters WHERE id = ?", id);
    this.forget(id);
    if (row !== undefined) {
      this.sql.run("INSERT OR REPLACE INTO gone (id, died_at, at) VALUES (?, ?, ?)", id, row.died_at, Date.now());
    }
  }

  /** The letter of a row whole, its pieces joined. */
  whole(row: LetterRow): KeptLetter {
    let letter = row.letter;
    if (row.pieces > 1) {
      const rest = this.sql.all<{ data: string }>(
        "SELECT data FROM dead_letter_pieces WHERE id = ? ORDER BY piece",
        row.id,
      );
      letter += rest.map((piece) => piece.data).join("");
    }
    return { id: row.id, channel: row.channel, diedAt: row.died_at, letter };
  }

  /** What the timeline knows a marked letter's message by. */
  private replayedLetter(row: MarkedSubject): ReplayedLetter {
    if (typeof row.conversation_id === "string" && typeof row.received_at === "number") {
      return { id: row.id, channel: row.channel, conversationId: row.conversation_id, acceptedAt: row.received_at };
    }
    const stored = this.sql.first<LetterRow>(
      "SELECT id, channel, died_at, pieces, letter FROM dead_letters WHERE id = ?",
      row.id,
    );
    if (stored === undefined) throw new Error(`dead letter ${row.id} went while its replay was marked`);
    return subjectOf((JSON.parse(this.whole(stored).letter) as DeadLetter).job.message);
  }

  private pruneGone(): void {
    const now = Date.now();
    if (now - this.prunedAt < PRUNE_EVERY_MS) return;
    this.prunedAt = now;
    this.sql.run("DELETE FROM gone WHERE at < ?", now - GONE_KEPT_MS);
  }

  private forget(id: string): void {
    this.sql.run("DELETE FROM dead_letters WHERE id = ?", id);
    this.sql.run("DELETE FROM dead_letter_pieces WHERE id = ?", id);
    this.listed = undefined;
  }
}
