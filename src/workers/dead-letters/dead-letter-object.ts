import { DurableObject } from "cloudflare:workers";
import { DEFAULT_MAX_DEAD_LETTERS } from "../../core/config/config-schema.js";
import type { DeadLetter } from "../../core/dead-letters/dead-letter.js";
import type {
  DeadLetterPageQuery,
  KeptWithin,
  ReplayedLetter,
  ReplayFilter,
} from "../../core/dead-letters/dead-letter-store.js";
import { type DeadLetterBound, keepDeadLetter } from "../../core/dead-letters/keep-dead-letter.js";
import { partsFor } from "../environment-parts.js";
import { MeteredSql, type StorageUsage } from "../metered-sql.js";
import type { WorkerEnv } from "../worker-env.js";
import { handBack } from "./dead-letter-hand-back.js";
import { createDeadLetterTables } from "./dead-letter-schema.js";
import { DeadLetterTable, type KeptLetter } from "./dead-letter-table.js";

export { DEAD_LETTER_STORE_NAME } from "./dead-letter-store-name.js";

/** Letters handed back to their conversations per alarm run; a bulk replay goes on over several runs. */
const REPLAYS_PER_RUN = 50;

/**
 * The dead letters of every channel, oldest first, in SQLite (`dead-letter-table.ts`): what
 * the admin API lists, shows, replays and deletes on Workers. The dead-letter queue's consumer
 * keeps each letter here ({@link keep}); each channel keeps at most `admin.max_dead_letters`,
 * the oldest going first with a warning that counts them.
 *
 * A replay only marks letters (they leave the list at once) and sets the alarm; the alarm
 * hands them, a few at a time, to their conversations' objects (`dead-letter-hand-back.ts`),
 * which run them again in their lanes, and deletes each once its object has stored it. So a
 * bulk replay of thousands answers at once and survives a crash, and one call never makes more
 * subrequests than the platform allows.
 */
export class DeadLetterObject extends DurableObject<WorkerEnv> {
  private readonly sql: MeteredSql;
  private readonly letters: DeadLetterTable;

  constructor(ctx: DurableObjectState, env: WorkerEnv) {
    super(ctx, env);
    this.sql = new MeteredSql(ctx.storage.sql);
    createDeadLetterTables(this.sql);
    this.letters = new DeadLetterTable(this.sql);
  }

  /** What this instance did that is billed; read by the cost test. */
  get usage(): StorageUsage {
    return { ...this.sql.usage };
  }

  /**
   * Keeps a dead letter within `admin.max_dead_letters` of the configuration the Worker runs
   * with, with the one warning when the oldest of its channel go. A copy the queue delivers
   * again changes nothing (see {@link DeadLetterTable.keep}).
   */
  async keep(letter: DeadLetter): Promise<void> {
    keepDeadLetter(this.letters, letter, await this.bound());
  }

  /** The store port's `keep`, within a bound the caller gives and without a log line. */
  keepWithin(letter: DeadLetter, max: number): KeptWithin {
    return this.letters.keep(letter, max);
  }

  /** Whether a letter of `id` that died at `diedAt` was kept (listed, replayed or deleted since). */
  knows(id: string, diedAt: number): boolean {
    return this.letters.knows(id, diedAt);
  }

  /** A page of listed letters (not being replayed), oldest first; `more` when others follow. */
  page(query: DeadLetterPageQuery): { letters: KeptLetter[]; more: boolean } {
    return this.letters.page(query);
  }

  /** One listed letter, or null (unknown, or being replayed). */
  one(id: string): KeptLetter | null {
    return this.letters.one(id);
  }

  /** Listed letters, those being replayed not included. */
  count(): number {
    return this.letters.count();
  }

  /** Forgets a listed letter; false when there is none with this id. */
  remove(id: string): boolean {
    return this.letters.remove(id);
  }

  /**
   * Marks listed letters for replay (all of them, those of `channel`, those in `ids`) and sets
   * the alarm that hands them back; returns the letters it marked.
   */
  async replay(filter: ReplayFilter): Promise<ReplayedLetter[]> {
    const marked = this.letters.mark(filter, Date.now());
    if (marked.length > 0) await this.schedule();
    return marked;
  }

  /** Hands marked letters to their conversations' objects, a few per run, until none is left. */
  override async alarm(): Promise<void> {
    this.sql.usage.alarmRuns += 1;
    const { logger } = await this.bound();
    const deps = { letters: this.letters, conversations: this.environment().CONVERSATIONS, logger };
    for (const row of this.letters.due(Date.now(), REPLAYS_PER_RUN)) await handBack(row, deps);
    await this.schedule();
  }

  /**
   * The environment the object works with: its own, which is the Worker's (one deployment, one
   * set of bindings, variables and secrets). A method, so that a harness that runs the object
   * under another environment (the tests' entry, `test/workers/support/`) can say so.
   */
  protected environment(): WorkerEnv {
    return this.env;
  }

  /** Sets the alarm to the next marked letter's time, if any. */
  private async schedule(): Promise<void> {
    const next = this.letters.nextReplayAt();
    if (next === undefined) return;
    this.sql.usage.alarmsSet += 1;
    await this.ctx.storage.setAlarm(Math.max(next, Date.now()));
  }

  /** The per-channel bound and the logger, from the configuration the Worker runs with. */
  private async bound(): Promise<DeadLetterBound> {
    const built = await partsFor(this.environment());
    if (!built.ok) return { max: DEFAULT_MAX_DEAD_LETTERS, logger: built.logger };
    return {
      max: built.parts.config.admin?.max_dead_letters ?? DEFAULT_MAX_DEAD_LETTERS,
      logger: built.parts.logger,
    };
  }
}
