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
   * Keeps a dead letter (again, when the queue delivers it twice) and bounds its channel to
   * `admin.max_dead_letters`, dropping the oldest with a warning.
   */
  async keep(letter: DeadLetter): Promise<void> {
    const id = letter.job.message.id;
    const { channel } = letter.job.message;
    const json = JSON.stringify(letter);
    const pieces = Math.max(1, Math.ceil(json.length / PIECE_CHARS));
    this.forget(id);
    this.sql.run(
      "INSERT INTO dead_letters (id, channel, died_at, pieces, letter) VALUES (?, ?, ?, ?, ?)",
      id,
      channel,
      letter.diedAt,
      pieces,
      json.slice(0, PIECE_CHARS),
    );
    for (let piece = 1; piece < pieces; piece += 1) {
      this.sql.run(
        "INSERT INTO dead_letter_pieces (id, piece, data) VALUES (?, ?, ?)",
        id,
        piece,
        json.slice(piece * PIECE_CHARS, (piece + 1) * PIECE_CHARS),
      );
    }
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
    return this.sql.first<{ n: number }>("SELECT COUNT(*) AS n FROM dead_letters WHERE replay_at IS NULL")?.n ?? 0;
  }

  /** Forgets a listed letter; false when there is none with this id. */
  remove(id: string): boolean {
    const listed = this.sql.first("SELECT id FROM dead_letters WHERE id = ? AND replay_at IS NULL", id);
    if (listed === undefined) return false;
    this.forget(id);
    return true;
  }

  /**
   * Marks listed letters for replay (all of them, those of `channel`, those in `ids`) and sets
   * the alarm that hands them back; returns how many were marked.
   */
  async replay(filter: { readonly channel?: string; readonly ids?: readonly string[] }): Promise<number> {
    const marked = this.sql.all(
      `UPDATE dead_letters SET replay_at = ?1 WHERE replay_at IS NULL
         AND (?2 IS NULL OR channel = ?2)
         AND (?3 IS NULL OR id IN (SELECT value FROM json_each(?3)))
       RETURNING id`,
      Date.now(),
      filter.channel ?? null,
      filter.ids === undefined ? null : JSON.stringify(filter.ids),
    ).length;
    if (marked > 0) await this.schedule();
    return marked;
  }

  /** Hands marked letters to their conversations' objects, a few per run, until none is left. */
  override async alarm(): Promise<void> {
    this.sql.usage.alarmRuns += 1;
    const { logger } = await this.settings();
    const now = Date.now();
    const due = this.sql.all<Row>(
      "SELECT id, channel, died_at, pieces, letter FROM dead_letters WHERE replay_at <= ? ORDER BY replay_at, died_at, id LIMIT ?",
      now,
      REPLAYS_PER_RUN,
    );
    for (const row of due) await this.handBack(this.whole(row), logger);
    await this.schedule();
  }

  private async handBack(kept: KeptLetter, logger: Logger): Promise<void> {
    let read: ReturnType<typeof readDeadLetterBody>;
    try {
      read = readDeadLetterBody({ deadLetter: JSON.parse(kept.letter) as unknown });
    } catch {
      read = undefined;
    }
    if (read === undefined || !("deadLetter" in read) || "stored" in read.deadLetter.job) {
      // Written by this object, so never expected; listed again rather than lost.
      logger.error("a dead letter cannot be read for its replay; it stays listed", { message_id: kept.id });
      this.sql.run("UPDATE dead_letters SET replay_at = NULL WHERE id = ?", kept.id);
      return;
    }
    const job = replayableJob({ ...read.deadLetter, job: read.deadLetter.job });
    const { CONVERSATIONS } = objectEnvironment(this.env);
    const stub = CONVERSATIONS.get(
      CONVERSATIONS.idFromName(conversationKey(kept.channel, job.message.message.conversationId)),
    );
    try {
      const result = await stub.replay(job);
      this.forget(kept.id);
      logger.info("dead letter replayed", {
        message_id: kept.id,
        channel: kept.channel,
        trace_id: job.message.trace?.traceId,
        ...(result === "duplicate" ? { already_running: true } : {}),
      });
    } catch (error) {
      logger.warn("a dead letter could not be handed back for its replay; trying again", {
        message_id: kept.id,
        channel: kept.channel,
        retry_in_ms: REPLAY_RETRY_MS,
        error: errorMessage(error),
      });
      this.sql.run("UPDATE dead_letters SET replay_at = ? WHERE id = ?", Date.now() + REPLAY_RETRY_MS, kept.id);
    }
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
 * being replayed. The indexes serve the list's order, per channel and over all of them.
 * `counters` holds `dropped`: letters dropped over the bound, ever.
 */
function createTables(sql: MeteredSql): void {
  sql.run(`CREATE TABLE IF NOT EXISTS dead_letters (
    id TEXT PRIMARY KEY,
    channel TEXT NOT NULL,
    died_at INTEGER NOT NULL,
    pieces INTEGER NOT NULL,
    letter TEXT NOT NULL,
    replay_at INTEGER
  )`);
  sql.run("CREATE INDEX IF NOT EXISTS dead_letters_order ON dead_letters (died_at, id)");
  sql.run("CREATE INDEX IF NOT EXISTS dead_letters_channel ON dead_letters (channel, died_at, id)");
  sql.run("CREATE INDEX IF NOT EXISTS dead_letters_replay ON dead_letters (replay_at) WHERE replay_at IS NOT NULL");
  sql.run("CREATE TABLE IF NOT EXISTS counters (name TEXT PRIMARY KEY, value INTEGER NOT NULL)");
  sql.run(
    "CREATE TABLE IF NOT EXISTS dead_letter_pieces (id TEXT NOT NULL, piece INTEGER NOT NULL, data TEXT NOT NULL, PRIMARY KEY (id, piece)) WITHOUT ROWID",
  );
}
