import { seedFrom } from "../../../shared/seeded-random.js";

/** The run's seed: CONFIG_FUZZ_SEED=<n> replays another one; the test's name and every failure name it. */
export const SEED = seedFrom("CONFIG_FUZZ_SEED", 0xc0_f1_62_26);
