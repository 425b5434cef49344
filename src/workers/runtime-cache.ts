import type { WorkerEnv } from "./worker-env.js";
import { createWorkerRuntime, type WorkerRuntime } from "./worker-runtime.js";

// Keyed by the environment object: the platform hands every invocation of an isolate the
// same one, so the configuration is validated and the app built once per isolate, while a
// test that passes its own environment gets a runtime of its own.
const runtimes = new WeakMap<WorkerEnv, Promise<WorkerRuntime>>();

/** The runtime of this isolate for `env`, built on first use. */
export function runtimeFor(env: WorkerEnv): Promise<WorkerRuntime> {
  let runtime = runtimes.get(env);
  if (runtime === undefined) {
    runtime = createWorkerRuntime(env);
    runtimes.set(env, runtime);
  }
  return runtime;
}
