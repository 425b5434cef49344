import { Worker } from "node:worker_threads";
import type { TimelineStore } from "../../../core/timeline/timeline-store.js";
import { createSqliteTimelineStore } from "./sqlite-timeline-store.js";
import type { StateDb } from "./state-db.js";
import type { FromTimelineWriter, TimelineWriterData, ToTimelineWriter } from "./timeline-writer-messages.js";

/** A timeline store whose writes run on a thread of their own, and which must be closed. */
export interface ThreadedTimelineStore extends TimelineStore {
  /** Lets the writes in flight finish, then ends the thread. */
  close(): Promise<void>;
}

/**
 * The first wait before a writer thread that ended on its own is started again; each start that
 * ends again doubles it, up to {@link MAX_RESTART_WAIT_MS}, and an answered write resets it.
 */
export const FIRST_RESTART_WAIT_MS = 1_000;
/** The longest wait between two starts of a writer thread that keeps ending. */
export const MAX_RESTART_WAIT_MS = 60_000;

/**
 * The timeline of `state_dir` with its writes on the timeline writer thread (`entry`,
 * dist/timeline-writer.js), which holds its own connection to the timeline file: a batch costs
 * the event loop only its copy to the thread. Reads (the admin API's, now and then) go through
 * `reader`, this thread's connection to the same file. A thread that ends on its own (an
 * uncaught error, out of memory) fails the writes in flight, and the first write or prune asked
 * after a wait starts a new one, so the timeline resumes without a restart of the service.
 */
export function createThreadedTimelineStore(
  stateDir: string,
  entry: URL,
  reader: StateDb,
  now: () => number = () => performance.now(),
): ThreadedTimelineStore {
  const reads = createSqliteTimelineStore(reader);
  const data: TimelineWriterData = { stateDir };
  const pending = new Map<number, { resolve: () => void; reject: (error: Error) => void }>();
  let nextId = 1;
  let failure: { readonly error: Error; readonly at: number } | undefined;
  let wait = FIRST_RESTART_WAIT_MS;
  let closing = false;

  const start = (): Worker => {
    const started = new Worker(entry, { workerData: data });
    // The thread never keeps the process alive: a stop closes it, and a crash loses a record only.
    started.unref();
    const failAll = (error: Error): void => {
      if (started !== worker || failure !== undefined) return;
      failure = { error, at: now() };
      for (const waiting of pending.values()) waiting.reject(error);
      pending.clear();
    };
    started.on("message", (message: FromTimelineWriter) => {
      const waiting = pending.get(message.id);
      pending.delete(message.id);
      wait = FIRST_RESTART_WAIT_MS;
      if (message.error === undefined) waiting?.resolve();
      else waiting?.reject(new Error(message.error));
    });
    started.on("error", (error) => failAll(error));
    started.on("exit", () => failAll(new Error("the timeline writer thread ended")));
    return started;
  };
  let worker = start();

  const ask = (message: ToTimelineWriter & { readonly id: number }): Promise<void> => {
    if (failure !== undefined) {
      if (closing || now() - failure.at < wait) return Promise.reject(failure.error);
      wait = Math.min(wait * 2, MAX_RESTART_WAIT_MS);
      // A thread that cannot be made (no memory for it) is a failure like one that ended: the
      // dead one stays in place, and the next try waits longer.
      try {
        const next = start();
        worker = next;
        failure = undefined;
      } catch (error) {
        failure = { error: error instanceof Error ? error : new Error(String(error)), at: now() };
        return Promise.reject(failure.error);
      }
    }
    return new Promise((resolve, reject) => {
      pending.set(message.id, { resolve, reject });
      worker.postMessage(message);
    });
  };
  return {
    write: (writes, counts) => ask({ kind: "write", id: nextId++, writes, counts }),
    prune: (limits) => ask({ kind: "prune", id: nextId++, limits }),
    one: (id) => reads.one(id),
    page: (query) => reads.page(query),
    activity: (since) => reads.activity(since),
    async close() {
      closing = true;
      if (failure !== undefined) return;
      // The thread answers in order: the writes asked before the close are made first.
      const exited = new Promise<void>((resolve) => worker.once("exit", () => resolve()));
      // Held while it ends: an unref'd thread is not something the process waits for, and the
      // stop that awaits this would end with nothing left to run.
      worker.ref();
      worker.postMessage({ kind: "close" } satisfies ToTimelineWriter);
      await exited;
    },
  };
}
