/**
 * The store contracts, held against the Durable Object implementations inside workerd, over
 * the pool's real namespaces. Every test uses fresh keys, so objects are never shared.
 */
import { env } from "cloudflare:workers";
import { createDurableConversationStore } from "../../src/workers/durable-conversation-store.js";
import { createDurableIdempotencyStore } from "../../src/workers/durable-idempotency-store.js";
import { createDurablePendingJobStore } from "../../src/workers/durable-pending-job-store.js";
import { createDurableSequenceCounter } from "../../src/workers/durable-sequence-counter.js";
import { conversationStoreContract } from "../shared/store-contracts/conversation-store-contract.js";
import { idempotencyStoreContract } from "../shared/store-contracts/idempotency-store-contract.js";
import { pendingJobStoreContract } from "../shared/store-contracts/pending-job-store-contract.js";
import { sequenceCounterContract } from "../shared/store-contracts/sequence-counter-contract.js";

conversationStoreContract("Durable Object", () => createDurableConversationStore(env.CONVERSATIONS));
sequenceCounterContract("Durable Object", () => createDurableSequenceCounter(env.CONVERSATIONS));
idempotencyStoreContract("Durable Object", () => ({ store: createDurableIdempotencyStore(env.IDEMPOTENCY) }));
pendingJobStoreContract("Durable Object", () => createDurablePendingJobStore(env.CONVERSATIONS, env.DEAD_LETTER_STORE));
