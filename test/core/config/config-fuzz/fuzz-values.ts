import type { Random } from "../../../shared/seeded-random.js";

/**
 * The secret the fuzz plants under keys named like secrets (`token`, `password`, …) and in
 * `*_env` keys: no problem or warning may ever repeat it. Shaped like a generated secret (long,
 * mixed case with digits), so the schema's own "looks like a secret" rule applies to it too.
 */
export const SECRET_MARKER = "Zq7XsEcReTmArKeR9kP2mN4vB8wL";

/** Keys `validateConfig` refuses as secrets in the file, in the spellings a person might use. */
export const SECRET_KEYS = ["token", "secret", "password", "api_key", "apikey", "TOKEN", "Password", "Api_Key"];

/** Characters of made-up keys: plain, and the ones a JSON path must quote or that read ambiguously. */
export const KEY_CHARS = "abcxyz_019-.$ []\"'é中😀\u202e\t";

/** Strings that are valid somewhere in a configuration, for putting in the wrong place. */
const PLAUSIBLE_STRINGS = [
  "webhook",
  "echo",
  "openai",
  "http",
  "rasa",
  "workers-ai",
  "127.0.0.1:8090",
  "0.0.0.0:8090",
  "[::1]:8090",
  "127.0.0.1:65536",
  "/webhook",
  "/healthz",
  "/admin/x",
  "/a/../b",
  "http://127.0.0.1:8091/replies",
  "https://user:pw@example.com/",
  "http://127.0.0.1:6000/",
  "http://127.0.0.1:11434/v1/chat/completions",
  "ftp://example.com/",
  "not a url",
  "WEBHOOK_SECRET",
  "1BAD_NAME",
  "10.0.0.0/8",
  "::1/128",
  "10.0.0.0/33",
  "debug",
  "receiver.down",
  "info ",
  "8090",
  "true",
  "null",
  "{}",
  "[]",
];

/** Numbers at and past every edge a setting has: JSON can carry them all (not Infinity or NaN). */
export const EDGE_NUMBERS = [
  0,
  -0,
  1,
  -1,
  0.5,
  1.5,
  -1e-7,
  5e-324,
  1e308,
  -1e308,
  1e21,
  2 ** 53 + 1,
  2 ** 53,
  Number.MAX_SAFE_INTEGER,
  -Number.MAX_SAFE_INTEGER,
  2 ** 31,
  2 ** 31 - 1,
  2 ** 32,
  65_535,
  65_536,
  100,
  101,
  1024,
  8760,
  8761,
  60_000,
  60_001,
  600_000,
  600_001,
  86_400,
  86_401,
  1_000_000,
  1_000_001,
  100_000_000,
];

/** Unicode that trips naive code: astral, combining, RTL override, NUL, a lone surrogate. */
const ODD_STRINGS = ["é中😀", "e\u0301", "\u202eevil", "a\u0000b", "\ud800", "\udfff\ud800", "\ufeff", " ", "", "\n"];

/** A number, usually one of {@link EDGE_NUMBERS}. */
export function genNumber(r: Random): number {
  return r.weighted<number>([
    [4, () => r.pick(EDGE_NUMBERS)],
    [1, () => r.int(100_000)],
    [1, () => (r.chance(0.5) ? -1 : 1) * r.int(1000) + r.int(1000) / 1000],
  ]);
}

/** A string: plausible in the wrong place, odd unicode, made up, or huge. */
export function genString(r: Random): string {
  return r.weighted<string>([
    [4, () => r.pick(PLAUSIBLE_STRINGS)],
    [2, () => r.pick(ODD_STRINGS)],
    [2, () => r.string(r.between(1, 30), KEY_CHARS)],
    [0.3, () => "x".repeat(100_000)],
    [0.2, () => `http://127.0.0.1:8091/${"a".repeat(50_000)}`],
  ]);
}

/** A made-up key: random characters, or an empty one. */
export function genKey(r: Random): string {
  return r.chance(0.05) ? "" : r.string(r.between(1, 12), KEY_CHARS);
}

/** Any JSON value, containers at most `depth` levels down. */
export function genJson(r: Random, depth = 2): unknown {
  const scalar = (): unknown =>
    r.weighted<unknown>([
      [1, () => null],
      [1, () => r.chance(0.5)],
      [3, () => genNumber(r)],
      [3, () => genString(r)],
    ]);
  if (depth <= 0) return scalar();
  return r.weighted<unknown>([
    [6, scalar],
    [1, () => []],
    [1, () => ({})],
    [1, () => Array.from({ length: r.between(1, 3) }, () => genJson(r, depth - 1))],
    [1, () => Object.fromEntries(Array.from({ length: r.between(1, 3) }, () => [genKey(r), genJson(r, depth - 1)]))],
  ]);
}

/** `inner` inside `depth` arrays or objects (built without recursion, so any depth works). */
export function deepNesting(r: Random, depth: number, inner: unknown = 1): unknown {
  let value = inner;
  for (let level = 0; level < depth; level += 1)
    value = r.chance(0.5) ? [value] : { [r.pick(["a", "webhook"])]: value };
  return value;
}
