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

/** Random bytes drawn at once for many ids: one call to the platform's CSPRNG is what costs. */
const POOL_BYTES = 16 * 256;
let pool = new Uint8Array(0);
let poolAt = POOL_BYTES;
const HEX = Array.from({ length: 256 }, (_, byte) => byte.toString(16).padStart(2, "0"));

/**
 * UUIDv7 (RFC 9562): the time in ms, then random bits. Ids made later sort later (to the ms),
 * so the indexes that hold message ids grow at their end instead of everywhere at once, which
 * is what an insert into a large B-tree costs; they stay opaque, unguessable UUIDs to clients.
 * The random bits come from a pool filled from the CSPRNG, as `crypto.randomUUID` does.
 */
export const timeOrderedId: IdGenerator = () => {
  if (poolAt + 10 > POOL_BYTES) {
    pool = crypto.getRandomValues(new Uint8Array(POOL_BYTES));
    poolAt = 0;
  }
  const at = poolAt;
  poolAt += 10;
  const random = (index: number): string => HEX[pool[at + index] ?? 0] ?? "00";
  const ms = Date.now();
  const time = ms.toString(16).padStart(12, "0").slice(-12);
  // Version 7 in the high nibble of byte 6, the RFC 9562 variant in the top bits of byte 8.
  const version = HEX[((pool[at] ?? 0) & 0x0f) | 0x70] ?? "70";
  const variant = HEX[((pool[at + 2] ?? 0) & 0x3f) | 0x80] ?? "80";
  return `${time.slice(0, 8)}-${time.slice(8, 12)}-${version}${random(1)}-${variant}${random(3)}-${random(4)}${random(5)}${random(6)}${random(7)}${random(8)}${random(9)}`;
};
