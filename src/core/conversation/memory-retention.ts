import { DEFAULT_CONVERSATION_RETENTION_HOURS } from "../config/conversation-memory-schema.js";
import type { ConversationTurn } from "./conversation-store.js";

const HOUR_MS = 3_600_000;

/**
 * The oldest `at` (epoch milliseconds) a turn may have at `now` and still be remembered under a
 * retention of `retentionHours`: a turn before it is neither sent to a brain nor kept. The one
 * rule every backend follows; they only store and delete by it.
 */
export function retentionCutoff(now: number, retentionHours: number): number {
  return now - retentionHours * HOUR_MS;
}

/** Whether `turn` is still remembered at `cutoff` (see {@link retentionCutoff}). */
export function isRetained(turn: ConversationTurn, cutoff: number): boolean {
  return turn.at >= cutoff;
}

/** What a store needs to apply the retention: `conversation_memory.retention_hours` and its clock. */
export interface MemoryRetention {
  readonly hours: number;
  /** Epoch milliseconds. */
  readonly now: () => number;
}

/** The retention when the configuration says nothing, by the system clock. */
export const DEFAULT_MEMORY_RETENTION: MemoryRetention = {
  hours: DEFAULT_CONVERSATION_RETENTION_HOURS,
  now: () => Date.now(),
};

/** The cutoff of `retention` now. */
export function cutoffOf(retention: MemoryRetention): number {
  return retentionCutoff(retention.now(), retention.hours);
}
