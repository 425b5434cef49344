import { partsFor } from "./environment-parts.js";
import type { WorkerEnv } from "./worker-env.js";
import { createWorkerRuntime, type WorkerRuntime } from "./worker-runtime.js";

// One runtime per environment object, as for the parts (see `partsFor`).
const runtimes = new WeakMap<WorkerEnv, Promise<WorkerRuntime>>();

/**
 * The Worker's runtime for `env` (the app and the queue handlers), built on first use from the
 * environment's parts. Apart from the parts because only the Worker's handlers need it: a Durable
 * Object that only answers never builds it, nor logs what building it logs.
 */
export function runtimeFor(env: WorkerEnv): Promise<WorkerRuntime> {
  let runtime = runtimes.get(env);
  if (runtime === undefined) {
    runtime = partsFor(env).then((parts) => createWorkerRuntime(env, parts));
    runtimes.set(env, runtime);
  }
  return runtime;
}
