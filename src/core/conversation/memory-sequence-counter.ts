import type { SequenceCounter } from "./sequence-counter.js";

/**
 * An in-process sequence counter. It forgets the least recently used conversations beyond
 * `maxConversations` (their numbering then restarts at 1); `state_dir` keeps them durably.
 */
export function createMemorySequenceCounter(maxConversations = 100_000): SequenceCounter {
  const last = new Map<string, number>();
  return {
    reserve(key, count) {
      const first = (last.get(key) ?? 0) + 1;
      last.delete(key);
      last.set(key, first + count - 1);
      if (last.size > maxConversations) {
        const oldest = last.keys().next();
        if (oldest.done !== true) last.delete(oldest.value);
      }
      return Promise.resolve(first);
    },
  };
}
