import type { SequenceCounter } from "../../core/conversation/sequence-counter.js";
import type { MeteredSql } from "../metered-sql.js";

/**
 * The `counters` table of a conversation, and its only writer: the reply `sequence` counter,
 * and `touched_at` (when the conversation was last active, for its expiry). SQL calls are
 * synchronous, so a reservation never interleaves with another.
 */
export class ConversationCounters {
  constructor(private readonly sql: MeteredSql) {}

  /** Reserves `count` reply sequence numbers (1, 2, 3… per conversation) and returns the first. */
  reserveSequence(count: number): number {
    const row = this.sql.first<{ value: number }>(
      "INSERT INTO counters (name, value) VALUES ('sequence', ?) ON CONFLICT (name) DO UPDATE SET value = value + excluded.value RETURNING value",
      count,
    );
    return (row?.value ?? count) - count + 1;
  }

  /** This counter as the core's, for the consumer inside the object (the key is this conversation's). */
  asSequenceCounter(): SequenceCounter {
    return { reserve: (_key, count) => Promise.resolve(this.reserveSequence(count)) };
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
