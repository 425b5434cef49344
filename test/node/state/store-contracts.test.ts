/**
 * The store contracts, held against the SQLite implementations (`state_dir`): each test
 * opens its own state database in a temporary directory, removed afterwards.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach } from "vitest";
import { conversationKey } from "../../../src/core/conversation/conversation-store.js";
import type { Job } from "../../../src/core/lifecycle/job.js";
import { openSqliteBackend } from "../../../src/node/state/sqlite/sqlite-backend.js";
import { createSqliteConversationStore } from "../../../src/node/state/sqlite/sqlite-conversation-store.js";
import { createSqliteDeadLetterStore } from "../../../src/node/state/sqlite/sqlite-dead-letter-store.js";
import { claimSqliteEpoch } from "../../../src/node/state/sqlite/sqlite-epoch.js";
import { createSqliteIdempotencyStore } from "../../../src/node/state/sqlite/sqlite-idempotency-store.js";
import { openStateDb, type StateDb } from "../../../src/node/state/sqlite/sqlite-state.js";
import { createSqliteTimelineStore } from "../../../src/node/state/sqlite/sqlite-timeline-store.js";
import { createThreadedTimelineStore } from "../../../src/node/state/sqlite/threaded-timeline-store.js";
import { openTimelineDb } from "../../../src/node/state/sqlite/timeline-db.js";
import type { StateBackend } from "../../../src/node/state/state-backend.js";
import { conversationStoreContract } from "../../shared/store-contracts/conversation-store-contract.js";
import { deadLetterStoreContract, keptThroughCore } from "../../shared/store-contracts/dead-letter-store-contract.js";
import {
  idempotencyStoreContract,
  queuedThroughJobStore,
} from "../../shared/store-contracts/idempotency-store-contract.js";
import { idleLaneContract } from "../../shared/store-contracts/idle-lane-contract.js";
import { laneStoreContract } from "../../shared/store-contracts/lane-store-contract.js";
import { timelineStoreContract } from "../../shared/store-contracts/timeline-store-contract.js";
import { timelineWriterEntry } from "../../support/delivery-worker-entry.js";
import { createLogSink } from "../../support/log-sink.js";

const opened: { dir: string; db: StateDb }[] = [];

/** A state database of its own for one test. */
async function freshDb(): Promise<StateDb> {
  const dir = await mkdtemp(join(tmpdir(), "webhook-channel-contract-"));
  const db = openStateDb(dir);
  opened.push({ dir, db });
  return db;
}

/** Backends opened by a test, closed after it; their folders are removed with the others. */
const closing: (() => void | Promise<void>)[] = [];
const dirs: string[] = [];

/** A state_dir of its own for one test. */
async function freshDir(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), "webhook-channel-contract-"));
  dirs.push(dir);
  return dir;
}

function backendDb(backend: StateBackend): StateDb {
  const db = backend.sqlite?.db;
  if (db === undefined) throw new Error("not a SQLite backend");
  return db;
}

afterEach(async () => {
  await new Promise((resolve) => setImmediate(resolve));
  for (const close of closing.splice(0)) await close();
  for (const dir of dirs.splice(0)) await rm(dir, { recursive: true, force: true });
  const done = opened.splice(0);
  // Let deferred writes (grouped commits and deletes run on setImmediate) finish first.
  await new Promise((resolve) => setImmediate(resolve));
  for (const { dir, db } of done) {
    db.close();
    await rm(dir, { recursive: true, force: true });
  }
});

/** A SQLite backend of its own for one test, its lanes, and a read of a lane's stored last number. */
async function sqliteLanes() {
  const backend = openSqliteBackend(await freshDir(), createLogSink().logger);
  closing.push(() => backend.close());
  const db = backendDb(backend);
  const lanes = backend.sqlite?.lanes;
  if (lanes === undefined) throw new Error("no SQLite lanes");
  const last = db.prepare<[string], { last: number }>("SELECT last FROM sequences WHERE conversation = ?");
  return { backend, db, lanes, last };
}

conversationStoreContract("SQLite", async () => createSqliteConversationStore(await freshDb()));
idempotencyStoreContract("SQLite", async () => {
  const dir = await freshDir();
  const backend = openSqliteBackend(dir, createLogSink().logger);
  closing.push(() => backend.close());
  // The key is committed with its message, in the transaction of the lane store's `add`.
  return {
    store: createSqliteIdempotencyStore(backendDb(backend)),
    queue: queuedThroughJobStore(backend.lanes),
  };
});
laneStoreContract(
  "SQLite",
  async () => {
    const { db, lanes, last } = await sqliteLanes();
    return {
      store: lanes,
      ticket: (key) => Promise.resolve({ key, epoch: lanes.epoch }),
      // A second process opening the same state_dir claims the file.
      claimElsewhere: () => {
        claimSqliteEpoch(db);
        return Promise.resolve();
      },
      lastSequenceElsewhere: (key) => Promise.resolve(last.get(key)?.last ?? 0),
      turns: (key) => createSqliteConversationStore(db).history(key, 100),
      jobs: (key) =>
        Promise.resolve(
          lanes
            .readPending(0, Number.MAX_SAFE_INTEGER)
            .map((row) => row.job)
            .filter(
              (job) =>
                `${job.message.channel.length}:${job.message.channel}:${job.message.message.conversationId}` === key,
            ),
        ),
      replays: "inbox",
    };
  },
  { keepsJobs: true },
);
idleLaneContract("SQLite", async () => {
  const { backend, db, lanes, last } = await sqliteLanes();
  const stored = db.prepare<[], { job: string }>("SELECT job FROM jobs");
  return {
    store: lanes,
    ticket: (key) => Promise.resolve({ key, epoch: lanes.epoch }),
    lastSequenceElsewhere: (key) => Promise.resolve(last.get(key)?.last ?? 0),
    jobs: (key) =>
      Promise.resolve(
        stored
          .all()
          .map((row) => JSON.parse(row.job) as Job)
          .filter((job) => conversationKey(job.message.channel, job.message.message.conversationId) === key),
      ),
    // One process runs every lane of the file: there is nothing to let go.
    letGo: () => Promise.resolve(),
    forgetIdle: (cutoff) => backend.forgetIdleConversations(cutoff),
    age: (key, ms) => {
      db.prepare("UPDATE sequences SET used_at = used_at - ? WHERE conversation = ?").run(ms, key);
      return Promise.resolve();
    },
  };
});
// The job queue writes each letter as its job dies, in the lane store's `bury`; the keep after it bounds.
deadLetterStoreContract(
  "SQLite",
  async () => {
    const { db, lanes } = await sqliteLanes();
    return keptThroughCore(createSqliteDeadLetterStore(db), (letter) => {
      const { channel, message } = letter.job.message;
      const written = lanes.bury({ key: conversationKey(channel, message.conversationId), epoch: lanes.epoch }, letter);
      if (written instanceof Promise) throw new Error("SQLite's bury commits at once");
    });
  },
  { buriedByJobs: true },
);
timelineStoreContract("SQLite", async () => {
  const dir = await mkdtemp(join(tmpdir(), "webhook-channel-contract-"));
  const db = openTimelineDb(dir);
  opened.push({ dir, db });
  return createSqliteTimelineStore(db);
});
// The same file, its writes made on the timeline writer thread (dist/timeline-writer.js).
timelineStoreContract("SQLite, written on the timeline writer thread", async () => {
  const dir = await freshDir();
  const db = openTimelineDb(dir);
  const store = createThreadedTimelineStore(dir, timelineWriterEntry(), db);
  closing.push(async () => {
    await store.close();
    db.close();
  });
  return store;
});
