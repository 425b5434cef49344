/** The store contracts, held against the in-memory implementations. */
import { createMemoryConversationStore } from "../../src/core/conversation/memory-conversation-store.js";
import { createMemorySequenceCounter } from "../../src/core/conversation/memory-sequence-counter.js";
import { createMemoryPendingJobStore } from "../../src/core/delivery/memory-pending-job-store.js";
import { createMemoryIdempotencyStore } from "../../src/core/idempotency/memory-idempotency-store.js";
import { conversationStoreContract } from "../shared/store-contracts/conversation-store-contract.js";
import { idempotencyStoreContract } from "../shared/store-contracts/idempotency-store-contract.js";
import { pendingJobStoreContract } from "../shared/store-contracts/pending-job-store-contract.js";
import { sequenceCounterContract } from "../shared/store-contracts/sequence-counter-contract.js";

conversationStoreContract("memory", () => createMemoryConversationStore());
sequenceCounterContract("memory", () => createMemorySequenceCounter());
idempotencyStoreContract("memory", () => ({ store: createMemoryIdempotencyStore() }));
pendingJobStoreContract("memory", () => createMemoryPendingJobStore());
