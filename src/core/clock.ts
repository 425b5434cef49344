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

/**
 * UUIDv7 (RFC 9562): the time in ms, then random bits. Ids made later sort later (to the ms),
 * so the indexes that hold message ids grow at their end instead of everywhere at once, which
 * is what an insert into a large B-tree costs; they stay opaque, unguessable UUIDs to clients.
 */
export const timeOrderedId: IdGenerator = () => {
  const bytes = crypto.getRandomValues(new Uint8Array(16));
  let ms = Date.now();
  for (let index = 5; index >= 0; index -= 1) {
    bytes[index] = ms % 256;
    ms = Math.floor(ms / 256);
  }
  bytes[6] = ((bytes[6] ?? 0) & 0x0f) | 0x70;
  bytes[8] = ((bytes[8] ?? 0) & 0x3f) | 0x80;
  let hex = "";
  for (const byte of bytes) hex += byte.toString(16).padStart(2, "0");
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
};
