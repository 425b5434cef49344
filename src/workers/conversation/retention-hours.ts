import { DEFAULT_CONVERSATION_RETENTION_HOURS } from "../../core/config/conversation-memory-schema.js";
import { loadWorkerConfig } from "../load-worker-config.js";
import type { WorkerEnv } from "../worker-env.js";

// Keyed by the environment object, as the Worker's parts are (`environment-parts.ts`): read once
// per isolate, while a test that passes its own environment gets its own.
const cache = new WeakMap<WorkerEnv, number>();

/**
 * `conversation_memory.retention_hours` of the Worker's configuration, read synchronously (a
 * conversation's memory is read and written inside synchronous SQL calls); its default while the
 * configuration is invalid, when no message is answered anyway.
 */
export function retentionHoursOf(env: WorkerEnv): number {
  let hours = cache.get(env);
  if (hours === undefined) {
    const loaded = loadWorkerConfig(env);
    hours = loaded.ok ? loaded.config.conversation_memory.retention_hours : DEFAULT_CONVERSATION_RETENTION_HOURS;
    cache.set(env, hours);
  }
  return hours;
}
