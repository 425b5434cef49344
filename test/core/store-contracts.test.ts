/** The store contracts, held against the in-memory implementations. */
import { createMemoryConversationStore } from "../../src/core/conversation/memory-conversation-store.js";
import { createMemorySequenceCounter } from "../../src/core/conversation/memory-sequence-counter.js";
import { createMemoryDeadLetterStore } from "../../src/core/dead-letters/memory-dead-letter-store.js";
import { createMemoryPendingJobStore } from "../../src/core/delivery/memory-pending-job-store.js";
import { createMemoryIdempotencyStore } from "../../src/core/idempotency/memory-idempotency-store.js";
import { conversationStoreContract } from "../shared/store-contracts/conversation-store-contract.js";
import { deadLetterStoreContract, keptThroughCore } from "../shared/store-contracts/dead-letter-store-contract.js";
import { idempotencyStoreContract } from "../shared/store-contracts/idempotency-store-contract.js";
import { pendingJobStoreContract } from "../shared/store-contracts/pending-job-store-contract.js";
import { sequenceCounterContract } from "../shared/store-contracts/sequence-counter-contract.js";

conversationStoreContract("memory", () => createMemoryConversationStore());
sequenceCounterContract("memory", () => createMemorySequenceCounter());
idempotencyStoreContract("memory", () => ({ store: createMemoryIdempotencyStore() }));
pendingJobStoreContract("memory", () => createMemoryPendingJobStore());
// A replay hands each job to its channel's queue, which here always has room.
deadLetterStoreContract("memory", () => keptThroughCore(createMemoryDeadLetterStore(() => true)));
