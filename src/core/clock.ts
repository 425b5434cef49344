/** Time and identity sources, injected so tests can pin them. */
export interface Clock {
  /** Epoch milliseconds. */
  now(): number;
}

/** The real clock. */
export const systemClock: Clock = { now: () => Date.now() };

/** Makes a new unique id. */
export type IdGenerator = () => string;

/** Random UUIDs from the platform's CSPRNG. */
export const randomId: IdGenerator = () => crypto.randomUUID();
