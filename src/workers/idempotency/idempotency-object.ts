import { DurableObject } from "cloudflare:workers";
import type { IdempotencyRecord, Reservation } from "../../core/idempotency/idempotency-store.js";

type ReservationRow = {
  message_id: string;
  conversation_id: string;
  committed: number;
  expires_at: number;
  fingerprint: string | null;
};

/**
 * One `Idempotency-Key` of one channel, addressed by `idFromName(channel, key)`: the answer
 * of the first request that carried it, until it expires. One object per key scales with
 * the number of clients, and the SQL write happens before any await, so two concurrent
 * requests with one key cannot both reserve it.
 */
export class IdempotencyObject extends DurableObject<unknown> {
  private readonly sql: SqlStorage;

  constructor(ctx: DurableObjectState, env: unknown) {
    super(ctx, env);
    this.sql = ctx.storage.sql;
    this.createTables();
  }

  /**
   * The key's live reservation (pending or committed) at `now`; otherwise reserves it as
   * pending for `leaseMs` and returns null.
   */
  async reserve(record: IdempotencyRecord, now: number, leaseMs: number): Promise<Reservation | null> {
    const row = this.sql
      .exec<ReservationRow>(
        "SELECT message_id, conversation_id, committed, expires_at, fingerprint FROM reservation WHERE only = 1",
      )
      .toArray()[0];
    if (row !== undefined && row.expires_at > now) {
      const found = { messageId: row.message_id, conversationId: row.conversation_id };
      return {
        record: row.fingerprint === null ? found : { ...found, fingerprint: row.fingerprint },
        committed: row.committed === 1,
      };
    }
    this.sql.exec(
      "INSERT OR REPLACE INTO reservation (only, message_id, conversation_id, committed, expires_at, fingerprint) VALUES (1, ?, ?, 0, ?, ?)",
      record.messageId,
      record.conversationId,
      now + leaseMs,
      record.fingerprint ?? null,
    );
    await this.ctx.storage.setAlarm(Date.now() + leaseMs);
    return null;
  }

  /**
   * `messageId` was queued: the key answers for it until `now + ttlMs`, if it is still reserved
   * for it. The id comes last and may be missing, so that a caller of the version before, which
   * sends none, still commits while a deployment rolls out (as that version did: whoever holds it).
   */
  async commit(now: number, ttlMs: number, messageId?: string): Promise<void> {
    const updated = this.sql.exec(
      "UPDATE reservation SET committed = 1, expires_at = ? WHERE only = 1 AND message_id = coalesce(?, message_id)",
      now + ttlMs,
      messageId ?? null,
    ).rowsWritten;
    if (updated > 0) await this.ctx.storage.setAlarm(Date.now() + ttlMs);
  }

  /**
   * Forgets the pending reservation for `messageId` (its message was not accepted after all); a
   * committed one, and one for another message, stay. Without an id (a caller of the version
   * before, while a deployment rolls out) any pending reservation goes, as it did then.
   */
  release(messageId?: string): void {
    this.sql.exec(
      "DELETE FROM reservation WHERE committed = 0 AND message_id = coalesce(?, message_id)",
      messageId ?? null,
    );
  }

  /** The key expired (or its lease ran out): nothing of it is kept. */
  override async alarm(): Promise<void> {
    await this.ctx.storage.deleteAll();
    this.createTables();
  }

  private createTables(): void {
    this.sql.exec(
      "CREATE TABLE IF NOT EXISTS reservation (only INTEGER PRIMARY KEY CHECK (only = 1), message_id TEXT NOT NULL, conversation_id TEXT NOT NULL, committed INTEGER NOT NULL DEFAULT 0, expires_at INTEGER NOT NULL, fingerprint TEXT)",
    );
    // An object made by a version before fingerprints were kept has the table without the
    // column: it gains it, and the key it holds answers any body, as it did.
    const columns = this.sql.exec<{ name: string }>("SELECT name FROM pragma_table_info('reservation')").toArray();
    if (!columns.some((column) => column.name === "fingerprint")) {
      this.sql.exec("ALTER TABLE reservation ADD COLUMN fingerprint TEXT");
    }
  }
}
