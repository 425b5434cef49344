/** mulberry32: a small seeded PRNG, uniform in [0, 1). */
function mulberry32(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
}

/** A seeded fuzz test's only source of chance: every draw comes from the seed, so a run replays exactly. */
export class Random {
  private readonly next: () => number;

  constructor(seed: number) {
    this.next = mulberry32(seed);
  }

  /** A whole number in [0, n). */
  int(n: number): number {
    return Math.floor(this.next() * n);
  }

  /** A whole number in [min, max]. */
  between(min: number, max: number): number {
    return min + this.int(max - min + 1);
  }

  /** True with probability `p`. */
  chance(p: number): boolean {
    return this.next() < p;
  }

  /** One of `items`, uniformly. */
  pick<T>(items: readonly T[]): T {
    if (items.length === 0) throw new Error("pick from an empty list");
    // In range, so an element of `items` (which may itself be undefined).
    return items[this.int(items.length)] as T;
  }

  /** Some of `items` (each kept with probability `p`), in their order. */
  some<T>(items: readonly T[], p = 0.5): T[] {
    return items.filter(() => this.chance(p));
  }

  /** Runs one of `choices`, each weighted by its first element. */
  weighted<T>(choices: readonly (readonly [number, () => T])[]): T {
    const total = choices.reduce((sum, [weight]) => sum + weight, 0);
    let at = this.next() * total;
    for (const [weight, make] of choices) {
      at -= weight;
      if (at < 0) return make();
    }
    const last = choices.at(-1);
    if (last === undefined) throw new Error("no choices");
    return last[1]();
  }

  /** `length` characters drawn from `alphabet` (by code point, so emoji stay whole). */
  string(length: number, alphabet: string): string {
    const chars = [...alphabet];
    let out = "";
    for (let index = 0; index < length; index += 1) out += this.pick(chars);
    return out;
  }

  /** Any UTF-16 code units, lone surrogates and controls included. */
  units(length: number): string {
    let out = "";
    for (let index = 0; index < length; index += 1) {
      out += String.fromCharCode(
        this.pick([
          this.int(0x80),
          this.int(0x80),
          0x80 + this.int(0x780),
          0xd800 + this.int(0x800),
          this.int(0x10000),
        ]),
      );
    }
    return out;
  }

  /** Characters a header value may carry (Latin-1, no NUL, CR or LF). */
  latin1(length: number): string {
    let out = "";
    for (let index = 0; index < length; index += 1) {
      let code = this.chance(0.8) ? 0x20 + this.int(0x5f) : 1 + this.int(0xff);
      if (code === 0x0a || code === 0x0d) code = 0x2d;
      out += String.fromCharCode(code);
    }
    return out;
  }

  /** `length` bytes, any values. */
  bytes(length: number): Uint8Array {
    const out = new Uint8Array(length);
    for (let index = 0; index < length; index += 1) out[index] = this.int(256);
    return out;
  }
}

/** The process's environment: Node's; inside workerd (the Workers fuzz) only what the vitest pool puts there. */
function environment(): Readonly<Record<string, string | undefined>> {
  const { process } = globalThis as { process?: { env?: Record<string, string | undefined> } };
  return process?.env ?? {};
}

/**
 * The seed a fuzz test runs: the environment variable `variable` (a whole number, taken as an
 * unsigned 32-bit seed) replays another one, else `fallback`. A value that is not a whole number
 * is refused rather than ignored, so that a replay never runs the default seed unnoticed. Inside
 * workerd the host's environment is not visible (the pool's process.env holds only its own
 * VITEST_* and mode variables), so a fuzz there always runs `fallback`.
 */
export function seedFrom(variable: string, fallback: number): number {
  const raw = environment()[variable];
  if (raw === undefined || raw === "") return fallback;
  const seed = Number(raw);
  if (!Number.isSafeInteger(seed)) throw new Error(`${variable} must be a whole number, not ${JSON.stringify(raw)}`);
  return seed >>> 0;
}
