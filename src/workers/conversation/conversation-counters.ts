import type { MeteredSql } from "../metered-sql.js";

/**
 * The `counters` table of a conversation, and its only writer: the floor of the reply
 * `sequence` counter, and `touched_at` (when the conversation was last active, for its expiry).
 *
 * A reply's number is not written here: the lane saves the replies before the first is posted
 * (their numbers inside), and a finished job's answered row keeps its last one, so the last
 * number is the highest of those and of this floor, read once per instance and followed in
 * memory after. The floor is written only when answered rows holding the highest number are
 * pruned.
 */
export class ConversationCounters {
  /** The last number, once read; reset when the storage is deleted. */
  private last: number | undefined;

  /** `laneLast` reads the highest number the lane's saved and answered jobs hold. */
  constructor(
    private readonly sql: MeteredSql,
    private readonly laneLast: () => number,
  ) {}

  /** The conversation's last reply number: the highest of the floor and of the lane's rows. */
  lastSequence(): number {
    this.last ??= Math.max(this.floor(), this.laneLast());
    return this.last;
  }

  /** New replies up to `last` were saved in the lane. */
  numbered(last: number): void {
    this.last = Math.max(this.lastSequence(), last);
  }

  /** Raises the stored floor to `last` (answered rows that held it are about to go). */
  keepSequence(last: number): void {
    this.sql.run(
      "INSERT INTO counters (name, value) VALUES ('sequence', ?1) ON CONFLICT (name) DO UPDATE SET value = MAX(value, ?1)",
      last,
    );
  }

  /** Forgets the number counted in memory: the storage was deleted. */
  forget(): void {
    this.last = undefined;
  }

  private floor(): number {
    return this.sql.first<{ value: number }>("SELECT value FROM counters WHERE name = 'sequence'")?.value ?? 0;
  }

  /** When the conversation was last noted active (epoch ms), undefined before the first time. */
  touchedAt(): number | undefined {
    return this.sql.first<{ value: number }>("SELECT value FROM counters WHERE name = 'touched_at'")?.value;
  }

  /** Notes the conversation active at `now`. */
  touch(now: number): void {
    this.sql.run(
      "INSERT INTO counters (name, value) VALUES ('touched_at', ?1) ON CONFLICT (name) DO UPDATE SET value = ?1",
      now,
    );
  }

  /** Forgets every counter but `sequence`, so numbering stays unique beside what is kept. */
  clearAllButSequence(): void {
    this.sql.run("DELETE FROM counters WHERE name <> 'sequence'");
  }
}
