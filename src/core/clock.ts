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

/** The time part of the last id made, and the ms it is for: ids made in the same ms share it. */
let prefixMs = -1;
let prefix = "";

/**
 * UUIDv7 (RFC 9562): the time in ms, then random bits. Ids made later sort later (to the ms),
 * so the indexes that hold message ids grow at their end instead of everywhere at once, which
 * is what an insert into a large B-tree costs; they stay opaque, unguessable UUIDs to clients.
 * The random bits and the variant are a random UUID's (the platform's CSPRNG, drawn in batches),
 * whose version 4 and first 48 bits give way to version 7 and the time.
 */
export const timeOrderedId: IdGenerator = () => {
  const ms = Date.now();
  if (ms !== prefixMs) {
    const time = ms.toString(16).padStart(12, "0").slice(-12);
    prefix = `${time.slice(0, 8)}-${time.slice(8, 12)}-7`;
    prefixMs = ms;
  }
  // "xxxxxxxx-xxxx-4" is the part replaced: 48 random bits and the version digit.
  return prefix + crypto.randomUUID().slice(15);
};
