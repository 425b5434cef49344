/**
 * A timeline writer thread that ends on its own (an uncaught error, out of memory) is started
 * again by the next write asked after a wait, so the timeline resumes without a restart of the
 * service. The thread here is the real one (dist/timeline-writer.js), behind an entry that ends
 * its first start at once, as a thread that died would.
 */
import { mkdtemp, readdir, readFile, readlink, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { afterEach, expect, it, vi } from "vitest";
import { openSqliteBackend } from "../../../../src/node/state/sqlite/sqlite-backend.js";
import {
  createThreadedTimelineStore,
  FIRST_RESTART_WAIT_MS,
  type ThreadedTimelineStore,
} from "../../../../src/node/state/sqlite/threaded-timeline-store.js";
import { openTimelineDb } from "../../../../src/node/state/sqlite/timeline-db.js";
import { accepted, freshChannel, subject } from "../../../shared/store-contracts/timeline-contract-writes.js";
import { timelineWriterEntry } from "../../../support/delivery-worker-entry.js";
import { createLogSink } from "../../../support/log-sink.js";

const cleanups: (() => Promise<void> | void)[] = [];

/** Set by a test: the next thread cannot be made, as when the process has no memory for one. */
const threads = vi.hoisted(() => ({ refuseNext: false }));

vi.mock("node:worker_threads", async (importOriginal) => {
  const real = await importOriginal<typeof import("node:worker_threads")>();
  class RefusableWorker extends real.Worker {
    constructor(...args: ConstructorParameters<typeof real.Worker>) {
      if (threads.refuseNext) {
        threads.refuseNext = false;
        throw Object.assign(new Error("cannot create a thread"), { code: "ERR_WORKER_INIT_FAILED" });
      }
      super(...args);
    }
  }
  return { ...real, Worker: RefusableWorker };
});

afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/**
 * An entry that runs the real writer thread, except on its first start in `dir` (or every start,
 * with `always`): that one ends at once.
 */
async function dyingEntry(dir: string, always = false): Promise<URL> {
  const entry = join(dir, "dying-writer.mjs");
  const starts = join(dir, "starts");
  await writeFile(
    entry,
    `import { appendFileSync, existsSync } from "node:fs";
const first = !existsSync(${JSON.stringify(starts)});
appendFileSync(${JSON.stringify(starts)}, "start\\n");
if (${always} || first) process.exit(1);
await import(${JSON.stringify(timelineWriterEntry().href)});
`,
  );
  return pathToFileURL(entry);
}

async function storeWith(
  always: boolean,
  now: () => number,
): Promise<{ store: ThreadedTimelineStore; starts: () => Promise<number> }> {
  const dir = await mkdtemp(join(tmpdir(), "webhook-channel-timeline-restart-"));
  const db = openTimelineDb(dir);
  const store = createThreadedTimelineStore(dir, await dyingEntry(dir, always), db, now);
  cleanups.push(() => rm(dir, { recursive: true, force: true }));
  cleanups.push(() => {
    db.close();
  });
  cleanups.push(() => store.close());
  const starts = async () => (await readFile(join(dir, "starts"), "utf8")).split("\n").length - 1;
  return { store, starts };
}

it("starts a writer thread that ended again at the first write after a wait, and the timeline is written again", async () => {
  let clock = 1_000_000;
  const { store } = await storeWith(false, () => clock);
  const channel = freshChannel();
  const lost = subject(channel, clock);
  await expect(store.write([accepted(lost)], [])).rejects.toThrow("the timeline writer thread ended");

  // Within the wait, writes fail at once: the thread is not started in a loop.
  clock += FIRST_RESTART_WAIT_MS - 1;
  await expect(store.write([accepted(subject(channel, clock))], [])).rejects.toThrow("ended");

  clock += 1;
  const kept = subject(channel, clock);
  await store.write([accepted(kept)], []);
  expect((await store.one(kept.id))?.status).toBe("accepted");
  expect(await store.one(lost.id)).toBeUndefined();
});

it("waits twice as long after each start that ended again", async () => {
  let clock = 1_000_000;
  const { store, starts } = await storeWith(true, () => clock);
  const attempt = () => store.write([accepted(subject(freshChannel(), clock))], []);
  await expect(attempt()).rejects.toThrow("ended");
  expect(await starts()).toBe(1);
  clock += FIRST_RESTART_WAIT_MS;
  await expect(attempt()).rejects.toThrow("ended");
  expect(await starts()).toBe(2);
  // It ended again: the next start waits twice as long.
  clock += FIRST_RESTART_WAIT_MS;
  await expect(attempt()).rejects.toThrow("ended");
  expect(await starts()).toBe(2);
  clock += FIRST_RESTART_WAIT_MS;
  await expect(attempt()).rejects.toThrow("ended");
  expect(await starts()).toBe(3);
});

it("takes a thread that cannot be made for a failed start: writes fail at once, a later one starts it, and a stop ends", async () => {
  let clock = 1_000_000;
  const { store, starts } = await storeWith(false, () => clock);
  await expect(store.write([accepted(subject(freshChannel(), clock))], [])).rejects.toThrow("ended");
  clock += FIRST_RESTART_WAIT_MS;
  threads.refuseNext = true;
  await expect(store.write([accepted(subject(freshChannel(), clock))], [])).rejects.toThrow("cannot create a thread");
  // Not taken for a live thread: the next write fails at once rather than waiting for ever.
  await expect(store.write([accepted(subject(freshChannel(), clock))], [])).rejects.toThrow("cannot create a thread");
  expect(await starts()).toBe(1);

  clock += 2 * FIRST_RESTART_WAIT_MS;
  const kept = subject(freshChannel(), clock);
  await store.write([accepted(kept)], []);
  expect((await store.one(kept.id))?.status).toBe("accepted");
  expect(await starts()).toBe(2);
  await store.close();
});

it("fails the start of state_dir when its first writer thread cannot be made, leaving neither file open", async () => {
  const dir = await mkdtemp(join(tmpdir(), "webhook-channel-timeline-refused-"));
  cleanups.push(() => rm(dir, { recursive: true, force: true }));
  threads.refuseNext = true;
  expect(() => openSqliteBackend(dir, createLogSink().logger, "service", { writer: timelineWriterEntry() })).toThrow(
    "cannot create a thread",
  );
  expect(await filesOpenIn(dir)).toEqual([]);
});

/** The files this process holds open under `dir`, from its descriptors (Linux's /proc). */
async function filesOpenIn(dir: string): Promise<string[]> {
  const open: string[] = [];
  for (const fd of await readdir("/proc/self/fd")) {
    const target = await readlink(join("/proc/self/fd", fd)).catch(() => "");
    if (target.startsWith(`${dir}/`)) open.push(target);
  }
  return open;
}
