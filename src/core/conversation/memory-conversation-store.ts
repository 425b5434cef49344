import type { ConversationStore, ConversationTurn } from "./conversation-store.js";

/** Bounds of the in-memory conversation store. */
export interface MemoryConversationStoreOptions {
  /** Turns kept per conversation (older ones are dropped). Default 100. */
  readonly maxTurns?: number;
  /** Conversations kept; the least recently used is evicted beyond this. Default 10000. */
  readonly maxConversations?: number;
  /** A conversation untouched this long is forgotten. Default 24 h. */
  readonly ttlMs?: number;
  readonly now?: () => number;
}

/**
 * An in-process conversation store with a per-conversation cap, an LRU cap on conversations
 * and a TTL, so memory stays bounded however many senders there are.
 */
export function createMemoryConversationStore(options: MemoryConversationStoreOptions = {}): ConversationStore {
  const maxTurns = options.maxTurns ?? 100;
  const maxConversations = options.maxConversations ?? 10_000;
  const ttlMs = options.ttlMs ?? 86_400_000;
  const now = options.now ?? Date.now;
  // Map iteration order is insertion order; re-inserting on touch makes it an LRU.
  const entries = new Map<string, { turns: ConversationTurn[]; touched: number }>();

  const live = (key: string): ConversationTurn[] | undefined => {
    const entry = entries.get(key);
    if (entry === undefined) return undefined;
    if (now() - entry.touched > ttlMs) {
      entries.delete(key);
      return undefined;
    }
    return entry.turns;
  };

  return {
    history(key, limit) {
      const turns = live(key) ?? [];
      return Promise.resolve(limit <= 0 ? [] : turns.slice(-limit));
    },
    append(key, turns) {
      const kept = [...(live(key) ?? []), ...turns].slice(-maxTurns);
      entries.delete(key);
      entries.set(key, { turns: kept, touched: now() });
      while (entries.size > maxConversations) {
        const oldest = entries.keys().next();
        if (oldest.done === true) break;
        entries.delete(oldest.value);
      }
      return Promise.resolve();
    },
  };
}
