import { DEFAULT_CONVERSATION_RETENTION_HOURS } from "../config/conversation-memory-schema.js";
import type { ConversationStore, ConversationTurn } from "./conversation-store.js";
import { isRetained, retentionCutoff } from "./memory-retention.js";

/** Bounds of the in-memory conversation store. */
export interface MemoryConversationStoreOptions {
  /** Turns kept per conversation (older ones are dropped). Default 100. */
  readonly maxTurns?: number;
  /** Conversations kept; the least recently used is evicted beyond this. Default 10000. */
  readonly maxConversations?: number;
  /**
   * `conversation_memory.retention_hours`: a turn older than this is neither in the history nor
   * kept, and a conversation untouched this long is forgotten whole. Default
   * {@link DEFAULT_CONVERSATION_RETENTION_HOURS}.
   */
  readonly retentionHours?: number;
  readonly now?: () => number;
}

/**
 * An in-process conversation store with a per-conversation cap, an LRU cap on conversations
 * and the retention, so memory stays bounded however many senders there are.
 */
export function createMemoryConversationStore(options: MemoryConversationStoreOptions = {}): ConversationStore {
  const maxTurns = options.maxTurns ?? 100;
  const maxConversations = options.maxConversations ?? 10_000;
  const retentionHours = options.retentionHours ?? DEFAULT_CONVERSATION_RETENTION_HOURS;
  const now = options.now ?? Date.now;
  // Map iteration order is insertion order; re-inserting on touch makes it an LRU.
  const entries = new Map<string, { turns: ConversationTurn[]; touched: number }>();

  /** The conversation's turns still retained at `cutoff`; a conversation untouched since then is forgotten. */
  const live = (key: string, cutoff: number): ConversationTurn[] => {
    const entry = entries.get(key);
    if (entry === undefined) return [];
    if (entry.touched < cutoff) {
      entries.delete(key);
      return [];
    }
    return entry.turns.filter((turn) => isRetained(turn, cutoff));
  };

  return {
    history(key, limit) {
      const turns = live(key, retentionCutoff(now(), retentionHours));
      return Promise.resolve(limit <= 0 ? [] : turns.slice(-limit));
    },
    append(key, turns) {
      const at = now();
      const cutoff = retentionCutoff(at, retentionHours);
      const kept = [...live(key, cutoff), ...turns.filter((turn) => isRetained(turn, cutoff))].slice(-maxTurns);
      entries.delete(key);
      entries.set(key, { turns: kept, touched: at });
      // The least recently touched come first: those untouched for the retention go now, rather
      // than only when their conversation is met again (or the bound evicts them).
      for (const [oldest, entry] of entries) {
        if (entry.touched >= cutoff) break;
        entries.delete(oldest);
      }
      while (entries.size > maxConversations) {
        const oldest = entries.keys().next();
        if (oldest.done === true) break;
        entries.delete(oldest.value);
      }
      return Promise.resolve();
    },
  };
}
