/**
 * The store contracts, held against the in-memory implementations. The pending-job store has
 * none in memory: without state_dir the job queue is the only copy (the volatile store keeps
 * nothing), so its contract runs on SQLite and the Durable Object.
 */
import { createMemoryConversationStore } from "../../src/core/conversation/memory-conversation-store.js";
import { createMemorySequenceCounter } from "../../src/core/conversation/memory-sequence-counter.js";
import { createMemoryDeadLetterStore } from "../../src/core/dead-letters/memory-dead-letter-store.js";
import { createMemoryIdempotencyStore } from "../../src/core/idempotency/memory-idempotency-store.js";
import { conversationStoreContract } from "../shared/store-contracts/conversation-store-contract.js";
import { deadLetterStoreContract, keptThroughCore } from "../shared/store-contracts/dead-letter-store-contract.js";
import { idempotencyStoreContract } from "../shared/store-contracts/idempotency-store-contract.js";
import { sequenceCounterContract } from "../shared/store-contracts/sequence-counter-contract.js";

conversationStoreContract("memory", () => createMemoryConversationStore());
sequenceCounterContract("memory", () => createMemorySequenceCounter());
idempotencyStoreContract("memory", () => ({ store: createMemoryIdempotencyStore() }));
// A replay hands each job to its channel's queue, which here always has room.
deadLetterStoreContract("memory", () => keptThroughCore(createMemoryDeadLetterStore(() => true)));
