import type { AdminDeps } from "../../core/admin/admin-routes.js";
import type { Config } from "../../core/config/config-schema.js";
import type { DeadLetter } from "../../core/delivery/dead-letter.js";
import type { Job } from "../../core/delivery/job.js";
import type { Logger } from "../../core/log/logger.js";
import type { StateDb } from "../state/sqlite-state.js";
import { createMemoryDeadLetters } from "./memory-dead-letters.js";
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
  /** Reads `admin.token_env` at start, like the channels' secrets (`NAME`, else `NAME_FILE`). */
  readonly env: (name: string) => string | undefined;
  /** Puts a replayed job back on its channel's queue (memory mode). */
  readonly restore: (job: Job) => void;
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
  const secret = options.env(admin.token_env);
  // A configured admin API without its secret stops the start rather than serving /admin/ open or silently off.
  if (secret === undefined || secret === "") {
    throw new Error(
      `environment variable ${admin.token_env} (admin.token_env) is not set or empty: it must hold the admin secret`,
    );
  }
  const deadLetters = db === undefined ? memory : createSqliteDeadLetters(db);
  if (deadLetters === undefined) return { deps: undefined, onDeadLetter };
  return { deps: { secret: () => secret, deadLetters }, onDeadLetter };
}
