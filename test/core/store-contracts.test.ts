/**
 * The store contracts, held against the in-memory implementations. The memory lane store keeps
 * no job (without state_dir the job queue is the only copy), so the case about stored jobs runs
 * on SQLite, Postgres and the Durable Object.
 */
import { createMemoryConversationStore } from "../../src/core/conversation/memory-conversation-store.js";
import { createMemoryDeadLetterStore } from "../../src/core/dead-letters/memory-dead-letter-store.js";
import { createMemoryIdempotencyStore } from "../../src/core/idempotency/memory-idempotency-store.js";
import { createMemoryLaneStore } from "../../src/core/lifecycle/memory-lane-store.js";
import { MemoryTimelineStore } from "../../src/core/timeline/memory-timeline-store.js";
import { conversationStoreContract } from "../shared/store-contracts/conversation-store-contract.js";
import { deadLetterStoreContract, keptThroughCore } from "../shared/store-contracts/dead-letter-store-contract.js";
import { idempotencyStoreContract } from "../shared/store-contracts/idempotency-store-contract.js";
import { laneStoreContract } from "../shared/store-contracts/lane-store-contract.js";
import { timelineStoreContract } from "../shared/store-contracts/timeline-store-contract.js";

conversationStoreContract("memory", () => createMemoryConversationStore());
laneStoreContract(
  "memory",
  () => {
    const memory = createMemoryConversationStore();
    const store = createMemoryLaneStore(memory);
    let elsewhere = 0;
    return Promise.resolve({
      store,
      ticket: (key) => Promise.resolve({ key, epoch: store.epoch }),
      claimElsewhere: () => {
        elsewhere = store.takeOver();
        return Promise.resolve();
      },
      lastSequenceElsewhere: async (key) => await store.lastSequence({ key, epoch: elsewhere }),
      turns: (key) => memory.history(key, 100),
      replays: "inbox",
    });
  },
  { keepsJobs: false },
);
idempotencyStoreContract("memory", () => ({ store: createMemoryIdempotencyStore() }));
// A replay hands each job to its channel's queue, which here always has room.
deadLetterStoreContract("memory", () => keptThroughCore(createMemoryDeadLetterStore(() => true)));
timelineStoreContract("memory", () => new MemoryTimelineStore());
