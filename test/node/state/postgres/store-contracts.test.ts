/**
 * The store contracts, held against the Postgres implementations (`postgres_url_env`): one
 * migrated database for the file, in the run's private cluster; the suites keep apart by
 * using fresh keys, channels and ids in every test.
 */
import type pg from "pg";
import { beforeAll } from "vitest";
import { createPostgresConversationStore } from "../../../../src/node/state/postgres/postgres-conversation-store.js";
import { createPostgresDeadLetterStore } from "../../../../src/node/state/postgres/postgres-dead-letter-store.js";
import { createPostgresIdempotencyStore } from "../../../../src/node/state/postgres/postgres-idempotency-store.js";
import { createPostgresPendingJobStore } from "../../../../src/node/state/postgres/postgres-pending-job-store.js";
import { createPostgresSequenceCounter } from "../../../../src/node/state/postgres/postgres-sequence-counter.js";
import { conversationStoreContract } from "../../../shared/store-contracts/conversation-store-contract.js";
import {
  deadLetterStoreContract,
  keptThroughCoreAsync,
} from "../../../shared/store-contracts/dead-letter-store-contract.js";
import {
  idempotencyStoreContract,
  queuedThroughJobStore,
} from "../../../shared/store-contracts/idempotency-store-contract.js";
import { pendingJobStoreContract } from "../../../shared/store-contracts/pending-job-store-contract.js";
import { sequenceCounterContract } from "../../../shared/store-contracts/sequence-counter-contract.js";
import { createLogSink } from "../../../support/log-sink.js";
import { migratedDatabase } from "./fresh-postgres.js";

let pool: pg.Pool;

beforeAll(async () => {
  ({ pool } = await migratedDatabase());
});

conversationStoreContract("Postgres", () => createPostgresConversationStore(pool));
sequenceCounterContract("Postgres", () => createPostgresSequenceCounter(pool));
idempotencyStoreContract("Postgres", () => {
  // The key is committed with its message, in the statement of the job store's `add`.
  const jobs = createPostgresPendingJobStore(pool, createLogSink().logger);
  return {
    store: createPostgresIdempotencyStore(pool),
    queue: queuedThroughJobStore(jobs),
  };
});
pendingJobStoreContract("Postgres", () => createPostgresPendingJobStore(pool, createLogSink().logger));
deadLetterStoreContract("Postgres", () => keptThroughCoreAsync(createPostgresDeadLetterStore(pool)));
