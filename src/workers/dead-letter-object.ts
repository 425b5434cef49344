import { DurableObject } from "cloudflare:workers";
import { errorMessage } from "../core/channel-error.js";
import { DEFAULT_MAX_DEAD_LETTERS } from "../core/config/config-schema.js";
import { conversationKey } from "../core/conversation/conversation-store.js";
import { type DeadLetter, replayableJob } from "../core/delivery/dead-letter.js";
import type { Logger } from "../core/log/logger.js";
import { deliveryFor } from "./delivery-parts.js";
import { MeteredSql, type StorageUsage } from "./metered-sql.js";
import { objectEnvironment } from "./object-environment.js";
import { readDeadLetterBody } from "./queue-body.js";
import type { WorkerEnv } from "./worker-env.js";

/** The name of the one instance (`idFromName`): every channel's dead letters are listed together. */
export const DEAD_LETTER_STORE_NAME = "dead-letters";

/**
 * Longest piece of a letter in one SQLite value, in UTF-16 code units: a Durable Object refuses
 * strings over 2 MB, and a code unit is at most 3 bytes of UTF-8. An accepted message is at most
 * 1 MiB, but a letter holds it and its rendered replies, so a large one is kept in pieces.
 */
const PIECE_CHARS = 500_000;

/** A page stops early past this many characters: an RPC result must stay well under its 32 MiB limit. */
const PAGE_CHARS = 4_000_000;

/** Letters handed back to their conversations per alarm run; a bulk replay goes on over several runs. */
const REPLAYS_PER_RUN = 50;

/** Wait before a replay is tried again when its conversation's object could not take it. */
const REPLAY_RETRY_MS = 30_000;

/** Hand-backs tried (about five minutes' worth) before a replay is given up and the letter listed again. */
const MAX_HAND_BACKS = 10;

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

/** What {@link DeadLetterObject.page} is asked for. */
export interface LetterPageQuery {
  readonly channel: string | null;
  /** The last letter of the previous page; null for the first. */
  readonly after: { readonly diedAt: number; readonly id: string } | null;
  readonly limit: number;
}

type Row = { id: string; channel: string; died_at: number; pieces: number; letter: string };
type MarkedRow = Row & { marked_at: number; tries: number };

/**
 * The dead letters of every channel, oldest first, in SQLite: what the admin API lists, shows,
 * replays and deletes on Workers. The dead-letter queue's consumer keeps each letter here
 * ({@link keep}); each channel keeps at most `admin.max_dead_letters`, the oldest going first
 * with a warning that counts them.
 *
 * A replay only marks letters (they leave the list at once) and sets the alarm; the alarm
 * hands them, a few at a time, to their conversations' objects, which run them again in
 * their lanes, and deletes each once its object has stored it. So a bulk replay of thousands
 * answers at once and survives a crash, and one call never makes more subrequests than the
 * platform allows.
 */
export class DeadLetterObject extends DurableObject<WorkerEnv> {
  private readonly sql: MeteredSql;
  /** Listed letters, counted once and then kept up to date, so that `/readyz` probes read no rows. */
  private listed: number | undefined;
  private prunedAt = 0;

  constructor(ctx: DurableObjectState, env: WorkerEnv) {
    super(ctx, env);
    this.sql = new MeteredSql(ctx.storage.sql);
    createTables(this.sql);
  }

  /** What this instance did that is billed; read by the cost test. */
  get usage(): StorageUsage {
    return { ...this.sql.usage };
  }

  /**
   * Keeps a dead letter and bounds its channel to `admin.max_dead_letters`, dropping the oldest
   * with a warning. A copy the queue delivers again changes nothing: a letter already here, or
   * replayed or deleted within {@link GONE_KEPT_MS}, is replaced only by a later death of its
   * message (a replay that failed again).
   */
  async keep(letter: DeadLetter): Promise<void> {
    const id = letter.job.message.id;
    const { channel } = letter.job.message;
    // MAX over no rows is NULL: a letter never seen before.
    const known = this.sql.first<{ died_at: number | null }>(
      "SELECT MAX(died_at) AS died_at FROM (SELECT died_at FROM dead_letters WHERE id = ?1 UNION ALL SELECT died_at FROM gone WHERE id = ?1)",
      id,
    )?.died_at;
    if (known !== null && known !== undefined && known >= letter.diedAt) return;
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
    const { max, logger } = await this.settings();
    const over = this.sql.all<{ id: string }>(
      "SELECT id FROM dead_letters WHERE channel = ? AND replay_at IS NULL ORDER BY died_at DESC, id DESC LIMIT -1 OFFSET ?",
      channel,
      max,
    );
    if (over.length === 0) return;
    for (const row of over) this.forget(row.id);
    const total = this.sql.first<{ value: number }>(
      "INSERT INTO counters (name, value) VALUES ('dropped', ?1) ON CONFLICT (name) DO UPDATE SET value = value + ?1 RETURNING value",
      over.length,
    );
    logger.warn("dead letters over admin.max_dead_letters: the oldest were dropped", {
      channel,
      max_dead_letters: max,
      dropped: over.length,
      dropped_total: total?.value ?? over.length,
    });
  }

  /** A page of listed letters (not being replayed), oldest first; `more` when others follow. */
  page(query: LetterPageQuery): { letters: KeptLetter[]; more: boolean } {
    const after = query.after ?? { diedAt: -1, id: "" };
    const where = "replay_at IS NULL AND (died_at > ?1 OR (died_at = ?1 AND id > ?2))";
    const rows =
      query.channel === null
        ? this.sql.all<Row>(
            `SELECT id, channel, died_at, pieces, letter FROM dead_letters WHERE ${where} ORDER BY died_at, id LIMIT ?3`,
            after.diedAt,
            after.id,
            query.limit + 1,
          )
        : this.sql.all<Row>(
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
    const row = this.sql.first<Row>(
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
   * Marks listed letters for replay (all of them, those of `channel`, those in `ids`) and sets
   * the alarm that hands them back; returns how many were marked.
   */
  async replay(filter: { readonly channel?: string; readonly ids?: readonly string[] }): Promise<number> {
    const marked = this.sql.all(
      `UPDATE dead_letters SET replay_at = ?1, marked_at = ?1, tries = 0 WHERE replay_at IS NULL
         AND (?2 IS NULL OR channel = ?2)
         AND (?3 IS NULL OR id IN (SELECT value FROM json_each(?3)))
       RETURNING id`,
      Date.now(),
      filter.channel ?? null,
      filter.ids === undefined ? null : JSON.stringify(filter.ids),
    ).length;
    if (marked > 0) {
      this.listed = undefined;
      await this.schedule();
    }
    return marked;
  }

  /** Hands marked letters to their conversations' objects, a few per run, until none is left. */
  override async alarm(): Promise<void> {
    this.sql.usage.alarmRuns += 1;
    const { logger } = await this.settings();
    const now = Date.now();
    const due = this.sql.all<MarkedRow>(
      "SELECT id, channel, died_at, pieces, letter, marked_at, tries FROM dead_letters WHERE replay_at <= ? ORDER BY replay_at, died_at, id LIMIT ?",
      now,
      REPLAYS_PER_RUN,
    );
    for (const row of due) await this.handBack(row, logger);
    await this.schedule();
  }

  private async handBack(row: MarkedRow, logger: Logger): Promise<void> {
    const kept = this.whole(row);
    let read: ReturnType<typeof readDeadLetterBody>;
    try {
      read = readDeadLetterBody({ deadLetter: JSON.parse(kept.letter) as unknown });
    } catch {
      read = undefined;
    }
    if (read === undefined || !("deadLetter" in read) || "stored" in read.deadLetter.job) {
      // Written by this object, so never expected; listed again rather than lost.
      logger.error("a dead letter cannot be read for its replay; it stays listed", { message_id: kept.id });
      this.relist(kept.id);
      return;
    }
    const job = replayableJob({ ...read.deadLetter, job: read.deadLetter.job });
    const { CONVERSATIONS } = objectEnvironment(this.env);
    const stub = CONVERSATIONS.get(
      CONVERSATIONS.idFromName(conversationKey(kept.channel, job.message.message.conversationId)),
    );
    try {
      const result = await stub.replay(job, row.marked_at);
      // Unless the letter changed meanwhile (its message died again, already): that one stays.
      const current = this.sql.first<{ marked_at: number | null }>(
        "SELECT marked_at FROM dead_letters WHERE id = ?",
        kept.id,
      );
      if (current?.marked_at === row.marked_at) this.bury(kept.id);
      logger.info("dead letter replayed", {
        message_id: kept.id,
        channel: kept.channel,
        trace_id: job.message.trace?.traceId,
        ...(result === "duplicate" ? { already_handed_back: true } : {}),
      });
    } catch (error) {
      const tries = row.tries + 1;
      if (tries >= MAX_HAND_BACKS) {
        logger.error("a replayed dead letter could not be handed back to its conversation; it is listed again", {
          message_id: kept.id,
          channel: kept.channel,
          tries,
          error: errorMessage(error),
        });
        this.relist(kept.id);
        return;
      }
      logger.warn("a dead letter could not be handed back for its replay; trying again", {
        message_id: kept.id,
        channel: kept.channel,
        retry_in_ms: REPLAY_RETRY_MS,
        error: errorMessage(error),
      });
      this.sql.run(
        "UPDATE dead_letters SET replay_at = ?, tries = ? WHERE id = ?",
        Date.now() + REPLAY_RETRY_MS,
        tries,
        kept.id,
      );
    }
  }

  /** Puts a letter being replayed back on the list. */
  private relist(id: string): void {
    this.sql.run("UPDATE dead_letters SET replay_at = NULL, marked_at = NULL, tries = 0 WHERE id = ?", id);
    this.listed = undefined;
  }

  /** Forgets a letter that was replayed or deleted, and remembers that it went (see {@link GONE_KEPT_MS}). */
  private bury(id: string): void {
    const row = this.sql.first<{ died_at: number }>("SELECT died_at FROM dead_letters WHERE id = ?", id);
    this.forget(id);
    if (row !== undefined) {
      this.sql.run("INSERT OR REPLACE INTO gone (id, died_at, at) VALUES (?, ?, ?)", id, row.died_at, Date.now());
    }
  }

  private pruneGone(): void {
    const now = Date.now();
    if (now - this.prunedAt < PRUNE_EVERY_MS) return;
    this.prunedAt = now;
    this.sql.run("DELETE FROM gone WHERE at < ?", now - GONE_KEPT_MS);
  }

  /** Sets the alarm to the next marked letter's time, if any. */
  private async schedule(): Promise<void> {
    const next = this.sql.first<{ at: number | null }>(
      "SELECT MIN(replay_at) AS at FROM dead_letters WHERE replay_at IS NOT NULL",
    )?.at;
    if (next === null || next === undefined) return;
    this.sql.usage.alarmsSet += 1;
    await this.ctx.storage.setAlarm(Math.max(next, Date.now()));
  }

  private forget(id: string): void {
    this.sql.run("DELETE FROM dead_letters WHERE id = ?", id);
    this.sql.run("DELETE FROM dead_letter_pieces WHERE id = ?", id);
    this.listed = undefined;
  }

  private whole(row: Row): KeptLetter {
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

  /** The logger and the per-channel bound, from the configuration the Worker runs with. */
  private async settings(): Promise<{ max: number; logger: Logger }> {
    const delivery = await deliveryFor(objectEnvironment(this.env));
    if (!delivery.ok) return { max: DEFAULT_MAX_DEAD_LETTERS, logger: delivery.logger };
    return {
      max: delivery.parts.config.admin?.max_dead_letters ?? DEFAULT_MAX_DEAD_LETTERS,
      logger: delivery.parts.logger,
    };
  }
}

/**
 * Creates the tables when missing (idempotent, synchronous, so it runs in the constructor).
 * `replay_at` is null for a listed letter and the time of its next hand-back while it is
 * being replayed, `marked_at` when that replay was asked for, `tries` its failed hand-backs.
 * The indexes serve the list's order, per channel and over all of them. `counters` holds
 * `dropped`: letters dropped over the bound, ever. `gone`: letters replayed or deleted lately.
 */
function createTables(sql: MeteredSql): void {
  sql.run(`CREATE TABLE IF NOT EXISTS dead_letters (
    id TEXT PRIMARY KEY,
    channel TEXT NOT NULL,
    died_at INTEGER NOT NULL,
    pieces INTEGER NOT NULL,
    letter TEXT NOT NULL,
    replay_at INTEGER,
    marked_at INTEGER,
    tries INTEGER NOT NULL DEFAULT 0
  )`);
  sql.run("CREATE INDEX IF NOT EXISTS dead_letters_order ON dead_letters (died_at, id)");
  sql.run("CREATE INDEX IF NOT EXISTS dead_letters_channel ON dead_letters (channel, died_at, id)");
  sql.run("CREATE INDEX IF NOT EXISTS dead_letters_replay ON dead_letters (replay_at) WHERE replay_at IS NOT NULL");
  sql.run("CREATE TABLE IF NOT EXISTS counters (name TEXT PRIMARY KEY, value INTEGER NOT NULL)");
  sql.run(
    "CREATE TABLE IF NOT EXISTS gone (id TEXT PRIMARY KEY, died_at INTEGER NOT NULL, at INTEGER NOT NULL) WITHOUT ROWID",
  );
  // The prune reads only what it deletes, however many letters went lately.
  sql.run("CREATE INDEX IF NOT EXISTS gone_at ON gone (at)");
  sql.run(
    "CREATE TABLE IF NOT EXISTS dead_letter_pieces (id TEXT NOT NULL, piece INTEGER NOT NULL, data TEXT NOT NULL, PRIMARY KEY (id, piece)) WITHOUT ROWID",
  );
}

/**
 * Cuts a letter's JSON into values a Durable Object stores, never between the two halves of a
 * surrogate pair (each half alone would be stored as U+FFFD).
 */
export function piecesOf(json: string): string[] {
  const pieces: string[] = [];
  let start = 0;
  while (start < json.length || pieces.length === 0) {
    let end = Math.min(start + PIECE_CHARS, json.length);
    const last = json.charCodeAt(end - 1);
    if (end < json.length && last >= 0xd800 && last <= 0xdbff) end -= 1;
    pieces.push(json.slice(start, end));
    start = end;
  }
  return pieces;
}
