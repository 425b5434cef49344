import type { PendingJobStore } from "./pending-job-store.js";

/**
 * The job store of the memory mode (no `state_dir`): it keeps nothing, so the job queue's
 * lanes are the only copy of what was accepted, and the hot path pays for no second map of
 * every message. `add` answers undefined (nothing to wait for), `get` never finds a job.
 * Dead letters of this mode are kept, if at all, by the dead-letter store the job queue
 * hands each letter to, not here.
 */
export function createVolatileJobStore(): PendingJobStore {
  return {
    add: () => undefined,
    update: () => undefined,
    get: () => undefined,
    remove: () => undefined,
    bury: () => undefined,
  };
}
