import type { Clock } from "../../core/clock.js";
import { DEFAULT_CONVERSATION_RETENTION_HOURS } from "../../core/config/conversation-memory-schema.js";
import { DEFAULT_TIMELINE_MESSAGES_IN_MEMORY } from "../../core/config/timeline-schema.js";
import type { ConversationStore } from "../../core/conversation/conversation-store.js";
import { createMemoryConversationStore } from "../../core/conversation/memory-conversation-store.js";
import { createMemoryDeadLetterStore } from "../../core/dead-letters/memory-dead-letter-store.js";
import { createMemoryIdempotencyStore } from "../../core/idempotency/memory-idempotency-store.js";
import { createMemoryLaneStore } from "../../core/lifecycle/memory-lane-store.js";
import { createMemoryCircuitStore } from "../../core/receiver/memory-circuit-store.js";
import { MemoryTimelineStore } from "../../core/timeline/memory-timeline-store.js";
import type { StateBackend } from "./state-backend.js";

/** A conversation memory that keeps nothing. */
const NO_MEMORY: ConversationStore = {
  history: () => Promise.resolve([]),
  append: () => Promise.resolve(),
};

/**
 * The memory mode (no `state_dir`): everything lives in this process and is lost when it
 * ends. Accepted jobs are kept only by the job queue (the memory lane store keeps no job).
 */
export function createMemoryBackend(
  clock: Clock,
  turnsOnThread = false,
  timelineBound = DEFAULT_TIMELINE_MESSAGES_IN_MEMORY,
  retentionHours = DEFAULT_CONVERSATION_RETENTION_HOURS,
): StateBackend {
  const conversations = createMemoryConversationStore({ now: () => clock.now(), retentionHours });
  // With the delivery thread the memory lives there, where the brains read it (it keeps the turns).
  const lanes = createMemoryLaneStore(turnsOnThread ? NO_MEMORY : conversations);
  return {
    mode: "memory",
    lanes,
    epoch: lanes.epoch,
    circuits: createMemoryCircuitStore(),
    circuitRefreshMs: undefined,
    idempotency: createMemoryIdempotencyStore(),
    conversations,
    timeline: new MemoryTimelineStore(timelineBound),
    sqlite: undefined,
    postgres: undefined,
    deadLetterStore: (restore) => createMemoryDeadLetterStore(restore),
    storedDeadLetters: () => undefined,
    writeProblem: () => undefined,
    claimLost: undefined,
    knownWriteProblem: undefined,
    writesConfirmedAt: () => performance.now(),
    describe: () => ({
      mode: "memory",
      note: "no state_dir: messages accepted but not yet finished are lost when the process ends",
    }),
    pruneExpired: () => Promise.resolve(0),
    pruneConversations: () => Promise.resolve(0),
    forgetIdleConversations: () => Promise.resolve(0),
    close: () => undefined,
  };
}
