import type { Readiness, ReadinessReport, ReadinessStatus } from "../../core/app/readiness.js";
import type { JobQueue } from "../queue/job-queue.js";
import type { StateDb } from "../state/sqlite-state.js";

/** What the Node readiness reads; everything is asked again on each probe. */
export interface NodeReadinessDeps {
  /** The job queue of every channel. */
  readonly queues: () => Iterable<JobQueue>;
  /** The state database with `state_dir`; undefined in memory mode. */
  readonly db: StateDb | undefined;
  readonly isShuttingDown: () => boolean;
  readonly deliveryThread: boolean;
  readonly now: () => number;
}

/**
 * `GET /readyz` on Node: `draining` once shutdown began, `unavailable` when the state store
 * cannot be written, `full` while a channel's buffer is full, else `ready`; with the backlog
 * summed over channels and the dead letters kept (stored in SQLite with `state_dir`, made
 * since start in memory). One probe costs a count and an empty write transaction at most.
 */
export function createNodeReadiness(deps: NodeReadinessDeps): Readiness {
  const { db } = deps;
  const countDead = db?.prepare("SELECT count(*) AS n FROM dead_letters");
  return {
    report(): ReadinessReport {
      let depth = 0;
      let capacity = 0;
      let full = false;
      let oldest: number | undefined;
      let deadSinceStart = 0;
      let storeError: string | undefined;
      for (const queue of deps.queues()) {
        depth += queue.size;
        capacity += queue.capacity;
        if (queue.size >= queue.capacity) full = true;
        deadSinceStart += queue.deadLetters;
        storeError ??= queue.storeError;
        const at = queue.oldestAcceptedAt();
        if (at !== undefined && (oldest === undefined || at < oldest)) oldest = at;
      }
      let deadLetters = deadSinceStart;
      if (db !== undefined) {
        storeError ??= probeWrite(db);
        if (storeError === undefined && countDead !== undefined) {
          try {
            deadLetters = (countDead.get() as { n: number }).n;
          } catch (error) {
            storeError = String(error);
          }
        }
      }
      let status: ReadinessStatus = "ready";
      if (deps.isShuttingDown()) status = "draining";
      else if (storeError !== undefined) status = "unavailable";
      else if (full) status = "full";
      return {
        status,
        queue: { depth, capacity, oldest_pending_ms: oldest === undefined ? 0 : Math.max(0, deps.now() - oldest) },
        dead_letters: deadLetters,
        state: db === undefined ? "memory" : "sqlite",
        delivery_thread: deps.deliveryThread ? "running" : "off",
      };
    },
  };
}

/**
 * Takes and releases the write lock in an empty transaction: a read-only or broken database,
 * or a closed connection, fails here. It never waits for the lock (a probe must not block the
 * event loop): a lock held by another writer (the delivery thread, the CLI) means the store
 * works, so SQLITE_BUSY counts as writable.
 */
function probeWrite(db: StateDb): string | undefined {
  let timeout: unknown;
  try {
    timeout = db.pragma("busy_timeout", { simple: true });
    db.pragma("busy_timeout = 0");
    try {
      db.exec("BEGIN IMMEDIATE");
      db.exec("ROLLBACK");
    } finally {
      db.pragma(`busy_timeout = ${Number(timeout)}`);
    }
    return undefined;
  } catch (error) {
    if (isBusy(error)) return undefined;
    return error instanceof Error ? error.message : String(error);
  }
}

function isBusy(error: unknown): boolean {
  return typeof error === "object" && error !== null && "code" in error && error.code === "SQLITE_BUSY";
}
