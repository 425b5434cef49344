import type { AdminDeps } from "../../core/admin/admin-routes.js";
import type { AdminDeadLetters } from "../../core/admin/dead-letter-admin.js";
import type { Config } from "../../core/config/config-schema.js";
import { createAdminDeadLetters } from "../../core/dead-letters/create-admin-dead-letters.js";
import { keepDeadLetter } from "../../core/dead-letters/keep-dead-letter.js";
import { createMemoryDeadLetterStore, type RestoreJob } from "../../core/dead-letters/memory-dead-letter-store.js";
import type { DeadLetter } from "../../core/delivery/dead-letter.js";
import type { Logger } from "../../core/log/logger.js";
import { createSqliteDeadLetterStore } from "../state/sqlite-dead-letter-store.js";
import type { StateDb } from "../state/sqlite-state.js";

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
 * Without `admin` nothing is kept beyond the job queue's own store and log line.
 */
export function createNodeAdmin(options: NodeAdminOptions): NodeAdmin {
  const { admin } = options.config;
  if (admin === undefined) return { deps: undefined, onDeadLetter: () => undefined };
  const store =
    options.db === undefined ? createMemoryDeadLetterStore(options.restore) : createSqliteDeadLetterStore(options.db);
  const bound = { max: admin.max_dead_letters, logger: options.logger };
  return {
    deps: { secret: options.secret, deadLetters: createAdminDeadLetters(store) },
    onDeadLetter: (letter) => {
      keepDeadLetter(store, letter, bound);
    },
  };
}

/** The admin API's dead letters over a state database, as the CLI's offline `show` and `delete` use them. */
export function createSqliteDeadLetters(db: StateDb): AdminDeadLetters {
  return createAdminDeadLetters(createSqliteDeadLetterStore(db));
}
