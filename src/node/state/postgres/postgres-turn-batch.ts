import type { Logger } from "../../../core/log/logger.js";
import { postgresErrorMessage } from "./postgres-state-error.js";

/**
 * The grouped writes of one store: what it gathered during an event-loop turn is written by
 * one statement, and while that statement runs, the next group gathers.
 */
export interface TurnBatch {
  /** The store holds writes: write them at the end of this turn, or right after the write in flight. */
  soon(): void;
  /** The store holds writes that may wait `ms` (a retry): written then, or with an earlier group. */
  later(ms: number): void;
  /** Resolves once everything the store held when called is written (or failed). */
  flush(): Promise<void>;
}

/**
 * Group commit for Postgres. A round trip, not a row, is what a write costs here, so the
 * writes of one event-loop turn share one statement (`write` takes what the store holds and
 * returns the statement's promise, or undefined when it holds nothing). At most one group is
 * in flight per store: groups commit in the order they were formed, so a job's update never
 * overtakes its add, nor its delete its update, and a group grows while the previous one
 * commits, which is what keeps the statement count down under load.
 *
 * `write`'s promise should settle what it took itself (resolve or reject its callers); a
 * rejection that reaches here is logged, never thrown.
 */
export function createTurnBatch(write: () => Promise<void> | undefined, logger: Logger): TurnBatch {
  let scheduled = false;
  let again = false;
  let running: Promise<void> | undefined;
  let timer: ReturnType<typeof setTimeout> | undefined;

  const start = (): Promise<void> | undefined => {
    clearTimeout(timer);
    timer = undefined;
    const written = write();
    if (written === undefined) return undefined;
    const settled = written
      .catch((error: unknown) => {
        logger.error("a grouped postgres write failed", { error: postgresErrorMessage(error) });
      })
      .finally(() => {
        running = undefined;
        if (again) {
          again = false;
          run();
        }
      });
    running = settled;
    return settled;
  };

  function run(): void {
    scheduled = false;
    if (running !== undefined) {
      again = true;
      return;
    }
    // Started, not awaited: its callers hold their own promises, and start() logs a failure.
    void start();
  }

  return {
    soon() {
      if (scheduled) return;
      scheduled = true;
      setImmediate(run);
    },
    later(ms) {
      if (scheduled || timer !== undefined) return;
      timer = setTimeout(run, ms);
      // A retry must not keep the process alive: a stop flushes.
      timer.unref();
    },
    async flush() {
      // What the store holds is either in the group in flight, or in the one that follows it
      // (which the in-flight one starts as it ends), or still held: wait for each in turn.
      if (running !== undefined) await running;
      if (running !== undefined) await running;
      await start();
    },
  };
}
