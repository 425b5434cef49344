import type { WorkerEnv } from "../../../src/workers/worker-env.js";

let replacement: WorkerEnv | undefined;

/**
 * The environment the Durable Objects of the test entry (`worker-entry.ts`) work with: the
 * test's, when one replaced theirs, else their own (the pool's).
 */
export function objectEnvironment(own: WorkerEnv): WorkerEnv {
  return replacement ?? own;
}

/**
 * The vitest pool gives Durable Objects the pool's environment (wrangler.toml's bindings, the
 * real queue producers, the bundled config.json), while each test hands the Worker one of its
 * own (its configuration, fake queue producers); this makes the objects of this isolate use the
 * test's, so both halves of a message's path see the same. `undefined` restores their own.
 */
export function replaceObjectEnvironment(env: WorkerEnv | undefined): void {
  replacement = env;
}

let handOverWait: number | undefined;

/**
 * How long the test entry's conversation objects wait for a hand-over's run: the production
 * value unless a test set another (the cost test counts the path of a run that finishes within
 * the wait, which a loaded machine must not turn into the other).
 */
export function objectHandOverWait(production: number): number {
  return handOverWait ?? production;
}

/** Sets the hand-over's wait of {@link objectHandOverWait}; `undefined` restores the production value. */
export function replaceHandOverWait(ms: number | undefined): void {
  handOverWait = ms;
}
