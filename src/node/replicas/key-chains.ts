/** Steps that run one after another per key, and what is under way across keys. */
export interface KeyChains {
  /** Runs `step` after the steps of `key` already under way (whether they failed or not). */
  run<T>(key: string, step: () => Promise<T>): Promise<T>;
  /** Resolves once every step under way now has ended. */
  settled(): Promise<void>;
}

/** A chain of steps per key: what one conversation goes through on a replica runs in order. */
export function createKeyChains(): KeyChains {
  const chains = new Map<string, Promise<unknown>>();
  return {
    run(key, step) {
      const previous = chains.get(key) ?? Promise.resolve();
      const next = previous.then(step, step);
      const tail = next.catch(() => undefined);
      chains.set(key, tail);
      void tail.then(() => {
        if (chains.get(key) === tail) chains.delete(key);
      });
      return next;
    },
    async settled() {
      await Promise.allSettled([...chains.values()]);
    },
  };
}
