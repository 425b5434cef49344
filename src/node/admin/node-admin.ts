import type { AdminDeps } from "../../core/admin/admin-routes.js";
import type { Config } from "../../core/config/config-schema.js";
import type { DeadLetter } from "../../core/delivery/dead-letter.js";
import type { Logger } from "../../core/log/logger.js";
import type { StateDb } from "../state/sqlite-state.js";
import { createMemoryDeadLetters, type RestoreJob } from "./memory-dead-letters.js";
import { createSqliteDeadLetters, trimSqliteDeadLetters } from "./sqlite-dead-letters.js";

/** The admin API of a Node service, and the hook its job queues call on each dead letter. */
export interface NodeAdmin {
  /** What `createApp` mounts; undefined without `admin` in the configuration. */
  readonly deps: AdminDeps | undefined;
  /** Keeps (in memory mode) and bounds the dead letters of the letter's channel. */
  readonly onDeadLetter: (letter: DeadLetter) => void;
}

/** What {@link createNodeAdmin} needs. */
export interface NodeAdminOptions {
  readonly config: Config;
  /** The state database with `state_dir`; dead letters are kept in memory without one. */
  readonly db: StateDb | undefined;
  /**
   * The admin secret in force, asked per request so that a reload's is the one checked (see
   * `readAdminSecret`, which the start and every reload check it with).
   */
  readonly secret: () => string;
  /** Puts a replayed job back on its channel's queue if it has room (memory mode). */
  readonly restore: RestoreJob;
  readonly logger: Logger;
}

/**
 * Builds the Node side of the admin API: over SQLite with `state_dir`, else over a list in
 * memory (the only place such letters are kept). Each channel keeps at most
 * `admin.max_dead_letters`: beyond that the oldest go, with a warning that counts them.
 */
export function createNodeAdmin(options: NodeAdminOptions): NodeAdmin {
  const { config, db, logger } = options;
  const admin = config.admin;
  const memory = db === undefined && admin !== undefined ? createMemoryDeadLetters(options.restore) : undefined;
  let dropped = 0;
  const onDeadLetter = (letter: DeadLetter): void => {
    if (admin === undefined) return;
    memory?.add(letter);
    const channel = letter.job.message.channel;
    const max = admin.max_dead_letters;
    const gone = db === undefined ? (memory?.trim(channel, max) ?? 0) : trimSqliteDeadLetters(db, channel, max);
    if (gone === 0) return;
    dropped += gone;
    logger.warn("dead letters over admin.max_dead_letters: the oldest were dropped", {
      channel,
      max_dead_letters: max,
      dropped: gone,
      dropped_total: dropped,
    });
  };
  if (admin === undefined) return { deps: undefined, onDeadLetter };
  const deadLetters = db === undefined ? memory : createSqliteDeadLetters(db);
  if (deadLetters === undefined) return { deps: undefined, onDeadLetter };
  return { deps: { secret: options.secret, deadLetters }, onDeadLetter };
}
