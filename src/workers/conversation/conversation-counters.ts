import type { SequenceCounter } from "../../core/conversation/sequence-counter.js";
import type { MeteredSql } from "../metered-sql.js";

/**
 * The `counters` table of a conversation, and its only writer: the floor of the reply
 * `sequence` counter, and `touched_at` (when the conversation was last active, for its expiry).
 *
 * A reply's number is not written here: the consumer saves the replies in the lane before it
 * posts the first (their numbers inside), and a finished job's answered row keeps its last one,
 * so the next free number is the highest of those and of this floor, read once per instance
 * and counted in memory after. Numbers reserved and lost with an instance before their
 * replies were saved were never posted, so they may be given again. The floor is written only
 * when answered rows holding the highest number are pruned, and by {@link reserveSequence}.
 */
export class ConversationCounters {
  /** The next free number, once read; reset when the storage is deleted. */
  private next: number | undefined;

  /** `lastSequence` reads the highest number the lane's saved and answered jobs hold. */
  constructor(
    private readonly sql: MeteredSql,
    private readonly lastSequence: () => number,
  ) {}

  /**
   * Reserves `count` reply sequence numbers (1, 2, 3… per conversation) and returns the first,
   * stored at once: for callers outside the object, whose replies it does not save.
   */
  reserveSequence(count: number): number {
    const first = this.reserveInLane(count);
    this.keepSequence(first + count - 1);
    return first;
  }

  /** Reserves numbers for replies the lane will save before they are posted: no write. */
  reserveInLane(count: number): number {
    this.next ??= Math.max(this.floor(), this.lastSequence()) + 1;
    const first = this.next;
    this.next += count;
    return first;
  }

  /** Raises the stored floor to `last` (answered rows that held it are about to go). */
  keepSequence(last: number): void {
    this.sql.run(
      "INSERT INTO counters (name, value) VALUES ('sequence', ?1) ON CONFLICT (name) DO UPDATE SET value = MAX(value, ?1)",
      last,
    );
  }

  /** Forgets the numbers counted in memory: the storage was deleted. */
  forget(): void {
    this.next = undefined;
  }

  /** This counter as the core's, for the consumer inside the object (the key is this conversation's). */
  asSequenceCounter(): SequenceCounter {
    return { reserve: (_key, count) => Promise.resolve(this.reserveInLane(count)) };
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
