/**
 * The store contracts, held against the SQLite implementations (`state_dir`): each test
 * opens its own state database in a temporary directory, removed afterwards.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach } from "vitest";
import { createSqliteConversationStore } from "../../../src/node/state/sqlite-conversation-store.js";
import { createSqliteDeadLetterStore } from "../../../src/node/state/sqlite-dead-letter-store.js";
import { createSqliteIdempotencyStore } from "../../../src/node/state/sqlite-idempotency-store.js";
import { createSqlitePendingJobStore } from "../../../src/node/state/sqlite-pending-job-store.js";
import { createSqliteSequenceCounter } from "../../../src/node/state/sqlite-sequence-counter.js";
import { openStateDb, type StateDb } from "../../../src/node/state/sqlite-state.js";
import { conversationStoreContract } from "../../shared/store-contracts/conversation-store-contract.js";
import { deadLetterStoreContract, keptThroughCore } from "../../shared/store-contracts/dead-letter-store-contract.js";
import {
  idempotencyStoreContract,
  queuedThroughJobStore,
} from "../../shared/store-contracts/idempotency-store-contract.js";
import { pendingJobStoreContract } from "../../shared/store-contracts/pending-job-store-contract.js";
import { sequenceCounterContract } from "../../shared/store-contracts/sequence-counter-contract.js";
import { createLogSink } from "../../support/log-sink.js";

const opened: { dir: string; db: StateDb }[] = [];

/** A state database of its own for one test. */
async function freshDb(): Promise<StateDb> {
  const dir = await mkdtemp(join(tmpdir(), "webhook-channel-contract-"));
  const db = openStateDb(dir);
  opened.push({ dir, db });
  return db;
}

afterEach(async () => {
  const done = opened.splice(0);
  // Let deferred writes (grouped commits and deletes run on setImmediate) finish first.
  await new Promise((resolve) => setImmediate(resolve));
  for (const { dir, db } of done) {
    db.close();
    await rm(dir, { recursive: true, force: true });
  }
});

conversationStoreContract("SQLite", async () => createSqliteConversationStore(await freshDb()));
sequenceCounterContract("SQLite", async () => createSqliteSequenceCounter(await freshDb()));
idempotencyStoreContract("SQLite", async () => {
  const db = await freshDb();
  // The key is committed with its message, in the transaction of the job store's `add`.
  const jobs = createSqlitePendingJobStore(db, createLogSink().logger);
  return {
    store: createSqliteIdempotencyStore(db),
    queue: queuedThroughJobStore(jobs),
  };
});
pendingJobStoreContract("SQLite", async () => createSqlitePendingJobStore(await freshDb(), createLogSink().logger));
deadLetterStoreContract("SQLite", async () => keptThroughCore(createSqliteDeadLetterStore(await freshDb())));
