import { resolve } from "node:path";
import type { Clock } from "../../core/clock.js";
import type { Config } from "../../core/config/config-schema.js";
import type { IdempotencyStore } from "../../core/idempotency/idempotency-store.js";
import { createMemoryIdempotencyStore } from "../../core/idempotency/memory-idempotency-store.js";
import type { Logger } from "../../core/log/logger.js";
import { createSqliteIdempotencyStore, pruneIdempotencyKeys } from "../state/sqlite-idempotency-store.js";
import { createSqlitePendingJobStore, type SqlitePendingJobStore } from "../state/sqlite-pending-job-store.js";
import { openStateDb, type StateDb } from "../state/sqlite-state.js";

/** Where the service keeps what it accepted: in memory, or in SQLite under `state_dir`. */
export interface ServiceState {
  readonly mode: "memory" | "sqlite";
  readonly idempotency: IdempotencyStore;
  /** The database with `state_dir`; conversations and sequences live there too. */
  readonly db: StateDb | undefined;
  /**
   * The durable job store, which also gives back unfinished and replayed jobs. None in memory
   * mode: the job queues are then the only copy of what was accepted.
   */
  readonly durable: SqlitePendingJobStore | undefined;
}

/**
 * Step 1 of a start: opens the state (creating `state_dir` and its database when set) and
 * logs where it is kept.
 */
export function openState(config: Config, logger: Logger, clock: Clock): ServiceState {
  if (config.state_dir === undefined) {
    logger.info("state", {
      mode: "memory",
      note: "no state_dir: messages accepted but not yet finished are lost when the process ends",
    });
    return {
      mode: "memory",
      idempotency: createMemoryIdempotencyStore(),
      db: undefined,
      durable: undefined,
    };
  }
  const db = openStateDb(config.state_dir);
  // Absolute, so that an operator can tell which file holds the work, whatever the cwd was.
  logger.info("state", { mode: "sqlite", path: resolve(db.name) });
  pruneIdempotencyKeys(db, clock.now());
  const durable = createSqlitePendingJobStore(db, logger);
  return { mode: "sqlite", idempotency: createSqliteIdempotencyStore(db), db, durable };
}
