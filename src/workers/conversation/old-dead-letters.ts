import { errorMessage } from "../../core/channel-error.js";
import type { Logger } from "../../core/log/logger.js";
import { DEAD_LETTER_STORE_NAME } from "../dead-letters/dead-letter-store-name.js";
import type { MeteredSql } from "../metered-sql.js";
import { readDeadLetterBody } from "../queue-body.js";
import type { WorkerEnv } from "../worker-env.js";

/**
 * The migration of version 0.1.0's dead letters, and the only user of the conversation's
 * `dead_letters` table. That version kept a conversation's dead letters in its own object,
 * where the admin API cannot list them; they move to the dead-letter store the first time the
 * object runs (see {@link moveOnce}). Nothing writes the table any more: once it is empty, this
 * only costs the one read that finds it so, once per instance.
 */
export class OldDeadLetters {
  /** Whether this instance moved every letter: the table is then empty for good. */
  private moved = false;

  constructor(private readonly sql: MeteredSql) {}

  /**
   * Moves the letters to the dead-letter store, unless this instance already did. One that
   * cannot be moved now stays (logged), and is tried again when the object wakes again; the
   * lane runs meanwhile. One that cannot be read is dropped with an error line.
   */
  async moveOnce(letters: WorkerEnv["DEAD_LETTER_STORE"], logger: Logger): Promise<void> {
    if (this.moved) return;
    const rows = this.sql.all<{ id: string; letter: string }>("SELECT id, letter FROM dead_letters");
    const store = letters.get(letters.idFromName(DEAD_LETTER_STORE_NAME));
    let left = 0;
    for (const row of rows) {
      try {
        const read = readDeadLetterBody({ deadLetter: JSON.parse(row.letter) as unknown });
        if (read !== undefined && "deadLetter" in read && !("stored" in read.deadLetter.job)) {
          await store.keep({ ...read.deadLetter, job: read.deadLetter.job });
        } else {
          logger.error("a dead letter kept by version 0.1.0 cannot be read; it is dropped", {
            message_id: row.id,
            ...(logger.enabled("debug") ? { letter: row.letter } : {}),
          });
        }
        this.sql.run("DELETE FROM dead_letters WHERE id = ?", row.id);
      } catch (error) {
        left += 1;
        logger.warn("a dead letter kept by version 0.1.0 cannot be moved to the dead-letter store yet", {
          message_id: row.id,
          error: errorMessage(error),
        });
      }
    }
    this.moved = left === 0;
  }

  /** Letters still waiting to move; an expiring conversation keeps them (and its sequence counter). */
  count(): number {
    return this.sql.first<{ n: number }>("SELECT COUNT(*) AS n FROM dead_letters")?.n ?? 0;
  }
}
