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
/** Random bytes each id takes: its 74 random bits. */
const RANDOM_BYTES = 10;
let pool = new Uint8Array(0);
let poolAt = POOL_BYTES;
const HEX_CODES = Array.from("0123456789abcdef", (digit) => digit.charCodeAt(0));
const DASH = 0x2d;
/** Where the 12 hex digits of the time go, in `xxxxxxxx-xxxx-7…`. */
const TIME_AT = [0, 1, 2, 3, 4, 5, 6, 7, 9, 10, 11, 12] as const;
/** The id being written, reused: its dashes and version digit never change. */
const codes = new Uint16Array(36);
codes[8] = DASH;
codes[13] = DASH;
codes[14] = 0x37;
codes[18] = DASH;
codes[23] = DASH;

const hexCode = (nibble: number): number => HEX_CODES[nibble & 0x0f] ?? 0x30;

/** The millisecond of the last id, and the counter of ids made in it (RFC 9562's rand_a). */
let lastMs = 0;
let counter = 0;
/** The counter's largest value: 12 bits. Past it the next ids borrow the next millisecond. */
const COUNTER_MAX = 0xfff;

/**
 * UUIDv7 (RFC 9562): the time in ms, then a counter within the ms (the RFC's method 1, in
 * rand_a, started at a random value in its lower half), then random bits. Ids one process
 * makes sort in the order it made them, even within one millisecond (the timeline lists a
 * conversation's messages in that order, which is the order they run in), so the indexes that hold message ids grow at their end instead of everywhere at once, which
 * is what an insert into a large B-tree costs; they stay opaque, unguessable UUIDs to clients.
 * The random bits come from a pool filled from the CSPRNG, as `crypto.randomUUID` does. The
 * id is written digit by digit into one flat string: an id is held as long as its message, its
 * timeline and its dead letter are, and a string joined from pieces holds every piece.
 */
export const timeOrderedId: IdGenerator = () => {
  if (poolAt + RANDOM_BYTES > POOL_BYTES) {
    pool = crypto.getRandomValues(new Uint8Array(POOL_BYTES));
    poolAt = 0;
  }
  const byte = (index: number): number => pool[poolAt + index] ?? 0;
  let ms = Date.now();
  // The same ms (or a clock stepped back): the next count of the last one's.
  if (ms <= lastMs) {
    ms = lastMs;
    counter += 1;
    if (counter > COUNTER_MAX) {
      ms += 1;
      counter = ((byte(0) << 3) | (byte(1) >> 5)) & 0x7ff;
    }
  } else counter = ((byte(0) << 3) | (byte(1) >> 5)) & 0x7ff;
  lastMs = ms;
  // 48 bits of ms, in two halves that bit operations can take.
  let high = Math.floor(ms / 0x1000000);
  let low = ms % 0x1000000;
  for (let digit = 11; digit >= 6; digit -= 1) {
    codes[TIME_AT[digit] ?? 0] = hexCode(low);
    low >>>= 4;
  }
  for (let digit = 5; digit >= 0; digit -= 1) {
    codes[TIME_AT[digit] ?? 0] = hexCode(high);
    high >>>= 4;
  }
  // rand_a: the counter's 12 bits after the version digit.
  codes[15] = hexCode(counter >> 8);
  codes[16] = hexCode(counter >> 4);
  codes[17] = hexCode(counter);
  // The RFC 9562 variant (binary 10) and 2 random bits, then 60 more random bits.
  codes[19] = hexCode(0x8 | (byte(1) & 0x3));
  codes[20] = hexCode(byte(2) >> 4);
  codes[21] = hexCode(byte(2));
  codes[22] = hexCode(byte(3) >> 4);
  for (let index = 0; index < 6; index += 1) {
    codes[24 + 2 * index] = hexCode(byte(4 + index) >> 4);
    codes[25 + 2 * index] = hexCode(byte(4 + index));
  }
  poolAt += RANDOM_BYTES;
  // apply takes any array-like, a typed array included; spreading it would be slower.
  return String.fromCharCode.apply(null, codes as unknown as number[]);
};
