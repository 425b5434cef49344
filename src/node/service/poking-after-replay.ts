import type { DeadLetterStore } from "../../core/dead-letters/dead-letter-store.js";

/**
 * `store` with `poke` called after each replay it took: the replay pickup looks at once, rather
 * than at its next poll, for what a replay through this process put back.
 */
export function pokingAfterReplay<S extends DeadLetterStore>(store: S, poke: () => void): S {
  return {
    ...store,
    replay(filter) {
      const replayed = store.replay(filter);
      if (replayed instanceof Promise) {
        return replayed.then((letters) => {
          poke();
          return letters;
        });
      }
      poke();
      return replayed;
    },
  };
}
