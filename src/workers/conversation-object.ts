import { DurableObject } from "cloudflare:workers";
import type { ConversationTurn } from "../core/conversation/conversation-store.js";
import type { Job } from "../core/delivery/job.js";
import { readJob } from "./queue-body.js";

/** Turns kept per conversation; older ones are deleted as new ones arrive. */
export const MAX_TURNS = 100;

/**
 * A conversation untouched this long is deleted whole (history, sequence counter, stored
 * jobs), so storage stays bounded however many senders come and go. It is far longer than
 * any retry lasts (`max_age_ms` defaults to 24 h).
 */
export const CONVERSATION_TTL_MS = 30 * 86_400_000;

type TurnRow = {
  role: string;
  text: string | null;
  media_url: string | null;
  media_type: string | null;
  at: number;
};

/**
 * One conversation of one channel, addressed by `idFromName(conversationKey(...))`. Its
 * SQLite storage holds the last {@link MAX_TURNS} turns, the reply sequence counter, and jobs
 * that must outlive a queue message: messages too large for one, and the progress of a
 * message being retried (its replies, so the brain is not asked twice). SQL calls are
 * synchronous, so two calls of one conversation never interleave their writes.
 */
export class ConversationObject extends DurableObject<unknown> {
  private readonly sql: SqlStorage;

  constructor(ctx: DurableObjectState, env: unknown) {
    super(ctx, env);
    this.sql = ctx.storage.sql;
    this.createTables();
  }

  /** The last `limit` turns (at most {@link MAX_TURNS}), oldest first. */
  history(limit: number): ConversationTurn[] {
    if (!(limit > 0)) return [];
    return this.sql
      .exec<TurnRow>(
        "SELECT role, text, media_url, media_type, at FROM (SELECT * FROM turns ORDER BY seq DESC LIMIT ?) ORDER BY seq ASC",
        Math.min(Math.floor(limit), MAX_TURNS),
      )
      .toArray()
      .map(toTurn);
  }

  /** Appends turns in order and drops all but the last {@link MAX_TURNS}. */
  async append(turns: readonly ConversationTurn[]): Promise<void> {
    for (const turn of turns) {
      this.sql.exec(
        "INSERT INTO turns (role, text, media_url, media_type, at) VALUES (?, ?, ?, ?, ?)",
        turn.role,
        turn.text ?? null,
        turn.mediaUrl ?? null,
        turn.mediaType ?? null,
        turn.at,
      );
    }
    this.sql.exec("DELETE FROM turns WHERE seq <= (SELECT MAX(seq) FROM turns) - ?", MAX_TURNS);
    await this.touch();
  }

  /** Reserves `count` reply sequence numbers (1, 2, 3… per conversation) and returns the first. */
  async reserveSequence(count: number): Promise<number> {
    const row = this.sql
      .exec<{ value: number }>(
        "INSERT INTO counters (name, value) VALUES ('sequence', ?) ON CONFLICT (name) DO UPDATE SET value = value + excluded.value RETURNING value",
        count,
      )
      .one();
    await this.touch();
    return row.value - count + 1;
  }

  /** Keeps a job (replacing an earlier state of it) until {@link forgetJob}. */
  async storeJob(job: Job): Promise<void> {
    this.sql.exec("INSERT OR REPLACE INTO jobs (id, job) VALUES (?, ?)", job.message.id, JSON.stringify(job));
    await this.touch();
  }

  /** A stored job, or null when there is none under that message id. */
  storedJob(id: string): Job | null {
    const row = this.sql.exec<{ job: string }>("SELECT job FROM jobs WHERE id = ?", id).toArray()[0];
    if (row === undefined) return null;
    return readJob(JSON.parse(row.job)) ?? null;
  }

  /** Deletes a job once it is answered or dead-lettered. */
  forgetJob(id: string): void {
    this.sql.exec("DELETE FROM jobs WHERE id = ?", id);
  }

  /**
   * Keeps a dead letter (the job with why it died) and drops the job. Dead letters are never
   * deleted by the expiry alarm: only an operator removes them.
   */
  async keepDeadLetter(id: string, letter: string): Promise<void> {
    this.sql.exec("INSERT OR REPLACE INTO dead_letters (id, letter, died_at) VALUES (?, ?, ?)", id, letter, Date.now());
    this.sql.exec("DELETE FROM jobs WHERE id = ?", id);
    await this.touch();
  }

  /** The dead letters kept here, oldest first, as stored JSON. */
  deadLetters(): string[] {
    return this.sql
      .exec<{ letter: string }>("SELECT letter FROM dead_letters ORDER BY died_at")
      .toArray()
      .map((row) => row.letter);
  }

  /**
   * The expiry alarm: nothing touched the conversation for the TTL, so it goes, except its
   * dead letters (and the sequence counter, so numbering stays unique beside them).
   */
  override async alarm(): Promise<void> {
    const kept = this.sql.exec<{ count: number }>("SELECT COUNT(*) AS count FROM dead_letters").one().count;
    if (kept > 0) {
      this.sql.exec("DELETE FROM turns");
      this.sql.exec("DELETE FROM jobs");
      return;
    }
    await this.ctx.storage.deleteAll();
    // deleteAll drops the tables too, and this instance may still be called.
    this.createTables();
  }

  /** Idempotent and synchronous, so it runs before any call is delivered. */
  private createTables(): void {
    this.sql.exec(`CREATE TABLE IF NOT EXISTS turns (
      seq INTEGER PRIMARY KEY AUTOINCREMENT,
      role TEXT NOT NULL,
      text TEXT,
      media_url TEXT,
      media_type TEXT,
      at INTEGER NOT NULL
    )`);
    this.sql.exec("CREATE TABLE IF NOT EXISTS counters (name TEXT PRIMARY KEY, value INTEGER NOT NULL)");
    this.sql.exec("CREATE TABLE IF NOT EXISTS jobs (id TEXT PRIMARY KEY, job TEXT NOT NULL)");
    this.sql.exec(
      "CREATE TABLE IF NOT EXISTS dead_letters (id TEXT PRIMARY KEY, letter TEXT NOT NULL, died_at INTEGER NOT NULL)",
    );
  }

  private async touch(): Promise<void> {
    await this.ctx.storage.setAlarm(Date.now() + CONVERSATION_TTL_MS);
  }
}

function toTurn(row: TurnRow): ConversationTurn {
  const turn: { -readonly [K in keyof ConversationTurn]: ConversationTurn[K] } = {
    role: row.role === "assistant" ? "assistant" : "user",
    at: row.at,
  };
  if (row.text !== null) turn.text = row.text;
  if (row.media_url !== null) turn.mediaUrl = row.media_url;
  if (row.media_type !== null) turn.mediaType = row.media_type;
  return turn;
}
