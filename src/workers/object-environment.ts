import type { WorkerEnv } from "./worker-env.js";

let replacement: WorkerEnv | undefined;

/**
 * The environment a Durable Object builds its delivery from: its own, which in production is
 * the Worker's (one deployment, one set of bindings, variables and secrets), unless a test
 * replaced it with {@link replaceObjectEnvironment}.
 */
export function objectEnvironment(own: WorkerEnv): WorkerEnv {
  return replacement ?? own;
}

/**
 * Tests only. The vitest pool gives Durable Objects the pool's environment, while each test
 * hands the Worker one of its own (its configuration, fake queue producers); this makes the
 * objects of this isolate use the test's, so both halves of a message's path see the same.
 * `undefined` restores their own.
 */
export function replaceObjectEnvironment(env: WorkerEnv | undefined): void {
  replacement = env;
}
