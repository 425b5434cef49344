import type { Readiness, ReadinessReport, ReadinessStatus } from "../../core/app/readiness.js";
import { commitsBehindError } from "../../core/app/refusals.js";
import { errorMessage } from "../../core/channel-error.js";
import { type ReceiverStanding, receiversDown } from "../../core/receiver/receiver-standing.js";
import type { JobQueue } from "../queue/job-queue.js";
import type { StateBackend } from "../state/state-backend.js";

/** What the Node readiness reads; everything is asked again on each probe. */
export interface NodeReadinessDeps {
  /** The job queue of every channel. */
  readonly queues: () => Iterable<JobQueue>;
  /** Where the state is kept: its mode, whether it can be written, the dead letters it holds. */
  readonly state: Pick<StateBackend, "mode" | "storedDeadLetters" | "writeProblem" | "writesConfirmedAt">;
  readonly isShuttingDown: () => boolean;
  readonly deliveryThread: boolean;
  readonly now: () => number;
}

/**
 * `GET /readyz` on Node: `draining` once shutdown began, `unavailable` when the state store
 * cannot be written, `full` while a channel's buffer is full or the database is behind with
 * the commits of accepted messages (new ones are refused with `buffer_full` then too), else
 * `ready`; with the backlog summed over channels and the dead letters kept (stored in SQLite
 * with `state_dir`, made since start in memory). One probe costs a count and an empty write
 * transaction at most, and after a failed write a committed write check until one passes.
 */
export function createNodeReadiness(deps: NodeReadinessDeps): Readiness {
  const { state } = deps;
  return {
    report(): ReadinessReport {
      let depth = 0;
      let capacity = 0;
      let full = false;
      let commitsBehind = false;
      let oldest: number | undefined;
      let deadSinceStart = 0;
      let storeError: string | undefined;
      let confirmedAt: number | undefined;
      const receivers: { channel: string; standing: ReceiverStanding }[] = [];
      for (const queue of deps.queues()) {
        const receiver = queue.receiver();
        if (receiver !== undefined) receivers.push({ channel: receiver.channel, standing: receiver });
        depth += queue.size;
        capacity += queue.capacity;
        if (queue.size >= queue.capacity) full = true;
        // The refusal is one shared error; a store known not to take writes refuses with
        // another, and the state's write problem reports it below.
        if (!commitsBehind && queue.refusal?.() === commitsBehindError()) commitsBehind = true;
        deadSinceStart += queue.deadLetters;
        if (queue.storeError !== undefined) {
          confirmedAt ??= state.writesConfirmedAt() ?? Number.NEGATIVE_INFINITY;
          queue.writesConfirmed(confirmedAt);
        }
        storeError ??= queue.storeError;
        const at = queue.oldestAcceptedAt();
        if (at !== undefined && (oldest === undefined || at < oldest)) oldest = at;
      }
      let deadLetters: number | null = deadSinceStart;
      try {
        storeError ??= state.writeProblem();
        if (storeError === undefined) {
          const stored = state.storedDeadLetters();
          if (stored !== undefined) deadLetters = [...stored.values()].reduce((sum, n) => sum + n, 0);
        }
      } catch (error) {
        storeError = errorMessage(error);
      }
      // A store that cannot be read or written does not say how many it keeps: the count of
      // this process since its start would stand for the whole store's (every replica's).
      if (storeError !== undefined && state.mode !== "memory") deadLetters = null;
      const down = receiversDown(receivers, deps.now());
      let status: ReadinessStatus = "ready";
      if (deps.isShuttingDown()) status = "draining";
      else if (storeError !== undefined) status = "unavailable";
      else if (full || commitsBehind) status = "full";
      return {
        status,
        queue: { depth, capacity, oldest_pending_ms: oldest === undefined ? 0 : Math.max(0, deps.now() - oldest) },
        dead_letters: deadLetters,
        state: state.mode,
        delivery_thread: deps.deliveryThread ? "running" : "off",
        // Accepting stays right while a receiver is down (replies wait in order): it is listed, not a status.
        ...(down.length === 0 ? {} : { receivers_down: down }),
        ...(commitsBehind ? { commits_behind: true } : {}),
      };
    },
  };
}
