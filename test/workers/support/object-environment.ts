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

/** How long a conversation object waits: for a hand-over's run, and to hold a new message back. */
export type ObjectWaits = { readonly handOverMs: number; readonly orderHoldMs: number };

let waits: Partial<ObjectWaits> = {};

/**
 * How long the test entry's conversation objects wait: the production values unless a test set
 * others. The cost test counts the path of a run that finishes within the hand-over's wait, which
 * a loaded machine must not turn into the other; the order test needs two hand-overs to meet
 * within the hold, which a loaded machine must not pull apart. An object reads its hold when it
 * starts, so a test sets it before its conversation's first call.
 */
export function objectWaits(production: ObjectWaits): ObjectWaits {
  return { ...production, ...waits };
}

/** Sets some of the waits of {@link objectWaits}; `{}` restores the production values. */
export function replaceObjectWaits(replacement: Partial<ObjectWaits>): void {
  waits = replacement;
}
