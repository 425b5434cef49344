import type { Spawned } from "./spawn-node.js";
import { waitFor } from "./wait-for.js";

/** The line a replica logs when it took conversations of another one over (src/node/replicas/owned-lanes.ts). */
export const TOOK_OVER = "took over conversations of another replica";

/**
 * Waits until one of `others` (spawned replicas) logged that it took another's conversations
 * over: how long a paused replica must stay asleep, however long a loaded machine takes for it,
 * rather than a fixed time that might fall short. Fails after `capMs`.
 */
export async function waitForTakeover(others: readonly Spawned[], capMs: number): Promise<void> {
  await waitFor(
    () => (others.some((other) => other.lines.some((line) => line.includes(TOOK_OVER))) ? true : undefined),
    capMs,
    "another replica to take the paused one's conversations over",
    100,
  );
}
