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
 * The timeline of `state_dir` with its writes on the timeline writer thread (`entry`,
 * dist/timeline-writer.js), which holds its own connection to the timeline file: a batch costs
 * the event loop only its copy to the thread. Reads (the admin API's, now and then) go through
 * `reader`, this thread's connection to the same file.
 */
export function createThreadedTimelineStore(stateDir: string, entry: URL, reader: StateDb): ThreadedTimelineStore {
  const reads = createSqliteTimelineStore(reader);
  const data: TimelineWriterData = { stateDir };
  const worker = new Worker(entry, { workerData: data });
  // The thread never keeps the process alive: a stop closes it, and a crash loses a record only.
  worker.unref();
  const pending = new Map<number, { resolve: () => void; reject: (error: Error) => void }>();
  let nextId = 1;
  let failure: Error | undefined;
  const failAll = (error: Error): void => {
    failure = error;
    for (const waiting of pending.values()) waiting.reject(error);
    pending.clear();
  };
  worker.on("message", (message: FromTimelineWriter) => {
    const waiting = pending.get(message.id);
    pending.delete(message.id);
    if (message.error === undefined) waiting?.resolve();
    else waiting?.reject(new Error(message.error));
  });
  worker.on("error", (error) => failAll(error));
  worker.on("exit", () => failAll(new Error("the timeline writer thread ended")));
  const ask = (message: ToTimelineWriter & { readonly id: number }): Promise<void> => {
    if (failure !== undefined) return Promise.reject(failure);
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
