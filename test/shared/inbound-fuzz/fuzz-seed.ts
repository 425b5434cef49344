import { seedFrom } from "../seeded-random.js";

/** The run's seed: FUZZ_SEED=<n> replays another one; a failure names it. */
export const SEED = seedFrom("FUZZ_SEED", 0x5eed_2026);
