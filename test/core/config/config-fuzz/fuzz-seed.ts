/** Reads CONFIG_FUZZ_SEED: a safe integer (as an unsigned 32-bit seed), or undefined when unset or unusable. */
export function parseSeed(raw: string | undefined): number | undefined {
  if (raw === undefined || raw === "") return undefined;
  const seed = Number(raw);
  return Number.isSafeInteger(seed) ? seed >>> 0 : undefined;
}

/** The run's seed: CONFIG_FUZZ_SEED=<n> replays another one; the test's name and every failure name it. */
export const SEED = parseSeed(process.env.CONFIG_FUZZ_SEED) ?? 0xc0_f1_62_26;
