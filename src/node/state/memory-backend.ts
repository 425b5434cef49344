import type { Clock } from "../../core/clock.js";
import { createMemoryConversationStore } from "../../core/conversation/memory-conversation-store.js";
import { createMemorySequenceCounter } from "../../core/conversation/memory-sequence-counter.js";
import { createMemoryDeadLetterStore } from "../../core/dead-letters/memory-dead-letter-store.js";
import { createMemoryIdempotencyStore } from "../../core/idempotency/memory-idempotency-store.js";
import { createVolatileJobStore } from "../../core/lifecycle/volatile-job-store.js";
import type { StateBackend } from "./state-backend.js";

/**
 * The memory mode (no `state_dir`): everything lives in this process and is lost when it
 * ends. Accepted jobs are kept only by the job queue (the volatile store keeps nothing).
 */
export function createMemoryBackend(clock: Clock): StateBackend {
  return {
    mode: "memory",
    jobs: createVolatileJobStore(),
    idempotency: createMemoryIdempotencyStore(),
    conversations: createMemoryConversationStore({ now: () => clock.now() }),
    sequences: createMemorySequenceCounter(),
    sqlite: undefined,
    postgres: undefined,
    deadLetterStore: (restore) => createMemoryDeadLetterStore(restore),
    storedDeadLetters: () => undefined,
    writeProblem: () => undefined,
    describe: () => ({
      mode: "memory",
      note: "no state_dir: messages accepted but not yet finished are lost when the process ends",
    }),
    prune: () => undefined,
    close: () => undefined,
  };
}
