/** Reads FUZZ_SEED: a safe integer (as an unsigned 32-bit seed), or undefined when unset or unusable. */
export function parseSeed(raw: string | undefined): number | undefined {
  if (raw === undefined || raw === "") return undefined;
  const seed = Number(raw);
  return Number.isSafeInteger(seed) ? seed >>> 0 : undefined;
}

/** The run's seed: FUZZ_SEED=<n> replays another one; a failure names it. */
export const SEED = parseSeed(process.env.FUZZ_SEED) ?? 0x5eed_2026;
