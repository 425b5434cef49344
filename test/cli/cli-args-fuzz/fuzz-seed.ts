import { seedFrom } from "../../shared/seeded-random.js";

/** The run's seed: CLI_FUZZ_SEED=<n> replays another one; the test's name and every failure name it. */
export const SEED = seedFrom("CLI_FUZZ_SEED", 0xc1_a7_20_26);
