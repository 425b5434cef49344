/**
 * The store contracts, held against the Postgres implementations (`postgres_url_env`): one
 * migrated database for the file, in the run's private cluster; the suites keep apart by
 * using fresh keys, channels and ids in every test.
 */
import type pg from "pg";
import { beforeAll } from "vitest";
import { channelOfKey } from "../../../../src/core/conversation/conversation-store.js";
import { claimLanes, releaseLanes } from "../../../../src/node/replicas/lane-statements.js";
import { createPostgresConversationStore } from "../../../../src/node/state/postgres/postgres-conversation-store.js";
import { createPostgresDeadLetterStore } from "../../../../src/node/state/postgres/postgres-dead-letter-store.js";
import { createPostgresIdempotencyStore } from "../../../../src/node/state/postgres/postgres-idempotency-store.js";
import { forgetIdlePostgresLanes } from "../../../../src/node/state/postgres/postgres-idle-lanes.js";
import { createPostgresLaneStore } from "../../../../src/node/state/postgres/postgres-lane-store.js";
import { createPostgresTimelineStore } from "../../../../src/node/state/postgres/postgres-timeline-store.js";
import { conversationStoreContract } from "../../../shared/store-contracts/conversation-store-contract.js";
import {
  deadLetterStoreContract,
  keptThroughCoreAsync,
} from "../../../shared/store-contracts/dead-letter-store-contract.js";
import {
  idempotencyStoreContract,
  queuedThroughJobStore,
} from "../../../shared/store-contracts/idempotency-store-contract.js";
import { idleLaneContract } from "../../../shared/store-contracts/idle-lane-contract.js";
import { laneStoreContract } from "../../../shared/store-contracts/lane-store-contract.js";
import { timelineStoreContract } from "../../../shared/store-contracts/timeline-store-contract.js";
import { createLogSink } from "../../../support/log-sink.js";
import { migratedDatabase } from "./fresh-postgres.js";
import { buryLetter } from "./lane-tickets.js";

let pool: pg.Pool;

beforeAll(async () => {
  ({ pool } = await migratedDatabase());
});

conversationStoreContract("Postgres", () => createPostgresConversationStore(pool));
idempotencyStoreContract("Postgres", () => {
  // The key is committed with its message, in the statement of the lane store's `add`.
  const lanes = createPostgresLaneStore(pool, "rcontract", createLogSink().logger);
  return {
    store: createPostgresIdempotencyStore(pool),
    queue: queuedThroughJobStore(lanes),
  };
});
laneStoreContract(
  "Postgres",
  async () => {
    const replica = `r${crypto.randomUUID().replaceAll("-", "").slice(0, 12)}`;
    const other = `${replica}x`;
    const store = createPostgresLaneStore(pool, replica, createLogSink().logger);
    const claim = async (key: string, owner: string) => {
      const [answer] = await claimLanes(pool, owner, true, [
        { conversation: key, channel: channelOfKey(key) ?? "", jobId: "", reclaim: true },
      ]);
      if (answer === undefined || !answer.mine) throw new Error(`${owner} could not claim ${key}`);
      return answer;
    };
    // Neither replica has a lease row: each takes a lane the other holds as a dead replica's.
    return {
      store,
      ticket: async (key) => ({ key, epoch: (await claim(key, replica)).epoch }),
      claimElsewhere: async (key) => {
        await store.flush();
        await claim(key, other);
      },
      lastSequenceElsewhere: async (key) =>
        Number(
          (
            await pool.query<{ last_seq: string }>(
              "SELECT last_seq FROM webhook_channel.lanes WHERE conversation = $1",
              [key],
            )
          ).rows[0]?.last_seq ?? 0,
        ),
      turns: (key) => createPostgresConversationStore(pool).history(key, 100),
      jobs: async (key) => {
        await store.flush();
        const rows = await pool.query<{ job: string }>(
          "SELECT job FROM webhook_channel.jobs WHERE conversation = $1 AND state = 'pending' ORDER BY seq",
          [key],
        );
        return rows.rows.map((row) => JSON.parse(row.job));
      },
      replays: "inbox",
    };
  },
  { keepsJobs: true },
);
idleLaneContract("Postgres", async () => {
  const replica = `r${crypto.randomUUID().replaceAll("-", "").slice(0, 12)}`;
  const store = createPostgresLaneStore(pool, replica, createLogSink().logger);
  return {
    store,
    ticket: async (key) => {
      await store.flush();
      const [answer] = await claimLanes(pool, replica, true, [
        { conversation: key, channel: channelOfKey(key) ?? "", jobId: "", reclaim: false },
      ]);
      if (answer === undefined || !answer.mine) throw new Error(`${replica} could not claim ${key}`);
      return { key, epoch: answer.epoch };
    },
    lastSequenceElsewhere: async (key) =>
      Number(
        (
          await pool.query<{ last_seq: string }>("SELECT last_seq FROM webhook_channel.lanes WHERE conversation = $1", [
            key,
          ])
        ).rows[0]?.last_seq ?? 0,
      ),
    jobs: async (key) => {
      await store.flush();
      return (await pool.query("SELECT id FROM webhook_channel.jobs WHERE conversation = $1", [key])).rows;
    },
    letGo: async (key) => {
      await store.flush();
      await releaseLanes(pool, replica, [key]);
    },
    forgetIdle: (cutoff) => forgetIdlePostgresLanes(pool, cutoff),
    age: async (key, ms) => {
      await pool.query(
        "UPDATE webhook_channel.lanes SET used_at = used_at - $2 * interval '1 millisecond' WHERE conversation = $1",
        [key, ms],
      );
    },
  };
});
// The job queue writes each letter as its job dies, in the lane store's `bury`; the keep after it bounds.
deadLetterStoreContract(
  "Postgres",
  () => {
    const replica = `r${crypto.randomUUID().replaceAll("-", "").slice(0, 12)}`;
    return keptThroughCoreAsync(createPostgresDeadLetterStore(pool), (letter) => buryLetter(pool, replica, letter));
  },
  { buriedByJobs: true },
);
timelineStoreContract("Postgres", () => createPostgresTimelineStore(pool));
