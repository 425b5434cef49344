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
   * Characters of turn text and media URLs kept over every conversation; the least recently used
   * conversations are evicted beyond this, and a conversation alone over it keeps its newest
   * turns within it. Default {@link DEFAULT_MAX_MEMORY_CHARACTERS}.
   */
  readonly maxCharacters?: number;
  /**
   * `conversation_memory.retention_hours`: a turn older than this is neither in the history nor
   * kept, and a conversation untouched this long is forgotten whole. Default
   * {@link DEFAULT_CONVERSATION_RETENTION_HOURS}.
   */
  readonly retentionHours?: number;
  readonly now?: () => number;
}

/**
 * The characters of conversation memory one process keeps by default. The counts alone let a
 * client holding a channel's secret fill the heap with large messages: many conversations of many
 * turns of the largest body each.
 */
export const DEFAULT_MAX_MEMORY_CHARACTERS = 32 * 1024 * 1024;

/** What a turn holds in characters, as the budget counts it. */
function sizeOf(turns: readonly ConversationTurn[]): number {
  let size = 0;
  for (const turn of turns) size += (turn.text?.length ?? 0) + (turn.mediaUrl?.length ?? 0);
  return size;
}

/**
 * An in-process conversation store with a per-conversation cap, an LRU cap on conversations,
 * a cap on the characters they hold together and the retention, so memory stays bounded
 * however many senders there are and however large their messages.
 */
export function createMemoryConversationStore(options: MemoryConversationStoreOptions = {}): ConversationStore {
  const maxTurns = options.maxTurns ?? 100;
  const maxConversations = options.maxConversations ?? 10_000;
  const maxCharacters = options.maxCharacters ?? DEFAULT_MAX_MEMORY_CHARACTERS;
  const retentionHours = options.retentionHours ?? DEFAULT_CONVERSATION_RETENTION_HOURS;
  const now = options.now ?? Date.now;
  // Map iteration order is insertion order; re-inserting on touch makes it an LRU.
  const entries = new Map<string, { turns: ConversationTurn[]; touched: number; size: number }>();
  let characters = 0;
  const forget = (key: string): void => {
    const entry = entries.get(key);
    if (entry === undefined) return;
    characters -= entry.size;
    entries.delete(key);
  };

  /** The conversation's turns still retained at `cutoff`; a conversation untouched since then is forgotten. */
  const live = (key: string, cutoff: number): ConversationTurn[] => {
    const entry = entries.get(key);
    if (entry === undefined) return [];
    if (entry.touched < cutoff) {
      forget(key);
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
      // Alone over the budget: its oldest turns go first.
      while (kept.length > 1 && sizeOf(kept) > maxCharacters) kept.shift();
      forget(key);
      const size = sizeOf(kept);
      entries.set(key, { turns: kept, touched: at, size });
      characters += size;
      // The least recently touched come first: those untouched for the retention go now, rather
      // than only when their conversation is met again (or the bound evicts them).
      for (const [oldest, entry] of entries) {
        if (entry.touched >= cutoff) break;
        forget(oldest);
      }
      while (entries.size > maxConversations || (characters > maxCharacters && entries.size > 1)) {
        const oldest = entries.keys().next();
        if (oldest.done === true || oldest.value === key) break;
        forget(oldest.value);
      }
      return Promise.resolve();
    },
  };
}
