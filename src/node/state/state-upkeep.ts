import { errorMessage } from "../../core/channel-error.js";
import { idleCutoff } from "../../core/conversation/idle-conversation.js";
import { cutoffOf, type MemoryRetention } from "../../core/conversation/memory-retention.js";
import type { Logger } from "../../core/log/logger.js";
import type { StateBackend } from "./state-backend.js";

/** When the upkeep runs: once shortly after the start, then about hourly. */
export interface StateUpkeepTiming {
  readonly firstMs: number;
  readonly everyMs: number;
}

/** Shortly after a start, when the start's own work is done; then hourly, as the retention counts in hours. */
export const STATE_UPKEEP_TIMING: StateUpkeepTiming = { firstMs: 60_000, everyMs: 3_600_000 };

/** A running upkeep schedule. */
export interface StateUpkeep {
  /** Clears the timer; a job under way finishes its batch, and its outcome is not logged. */
  stop(): void;
}

/** One of the upkeep's jobs, with what its log lines say. */
interface PruneTask {
  readonly run: () => Promise<number>;
  /** The count's field in the log lines. */
  readonly field: string;
  readonly done: string;
  readonly failed: string;
  readonly again: string;
}

/**
 * The durable state's hourly upkeep, off the message path: deletes the conversation turns older
 * than the retention from `state`, forgets the counters of conversations idle past
 * `IDLE_CONVERSATION_MS`, and deletes what expired (idempotency keys). On an unref'd timer (it
 * never keeps the process alive), each run after the previous one ended, so two never overlap.
 * A failed job is logged at warn, once until it succeeds again (an unreachable database would
 * otherwise say the same every hour), and never thrown: the next run tries again, and meanwhile
 * the reads still leave out what is past its time.
 */
export function scheduleStateUpkeep(
  state: Pick<StateBackend, "pruneConversations" | "forgetIdleConversations" | "pruneExpired">,
  retention: MemoryRetention,
  logger: Logger,
  timing: StateUpkeepTiming = STATE_UPKEEP_TIMING,
): StateUpkeep {
  let timer: ReturnType<typeof setTimeout> | undefined;
  let stopped = false;
  const tasks: PruneTask[] = [
    {
      run: () => state.pruneConversations(cutoffOf(retention)),
      field: "deleted_turns",
      done: "pruned conversation memory",
      failed: "cannot prune conversation memory; old turns stay stored until a prune succeeds",
      again: "pruning conversation memory again",
    },
    {
      run: () => state.forgetIdleConversations(idleCutoff(retention.now())),
      field: "forgotten_conversations",
      done: "forgot idle conversations' reply counters",
      failed: "cannot forget idle conversations; their reply counters stay stored until a pass succeeds",
      again: "forgetting idle conversations again",
    },
    {
      run: () => state.pruneExpired(retention.now()),
      field: "deleted_rows",
      done: "pruned expired idempotency keys and failed-authentication windows",
      failed:
        "cannot prune expired idempotency keys and failed-authentication windows; they stay stored until a prune succeeds",
      again: "pruning expired idempotency keys and failed-authentication windows again",
    },
  ];
  const failing = new Set<PruneTask>();

  const runTask = async (task: PruneTask): Promise<void> => {
    try {
      const count = await task.run();
      if (stopped) return;
      if (failing.has(task)) logger.info(task.again, { [task.field]: count });
      else if (count > 0) logger.debug(task.done, { [task.field]: count });
      failing.delete(task);
    } catch (error) {
      if (stopped || failing.has(task)) return;
      failing.add(task);
      logger.warn(task.failed, { error: errorMessage(error) });
    }
  };

  const run = async (): Promise<void> => {
    for (const task of tasks) {
      if (stopped) return;
      await runTask(task);
    }
  };

  const arm = (ms: number): void => {
    if (stopped) return;
    timer = setTimeout(() => {
      void run().finally(() => {
        arm(timing.everyMs);
      });
    }, ms);
    timer.unref();
  };

  arm(timing.firstMs);
  return {
    stop() {
      stopped = true;
      clearTimeout(timer);
    },
  };
}

/**
 * `state`, kept up on the schedule of {@link scheduleStateUpkeep} until it is closed (the
 * schedule stops before the state does).
 */
export function withStateUpkeep(
  state: StateBackend,
  retention: MemoryRetention,
  logger: Logger,
  timing?: StateUpkeepTiming,
): StateBackend {
  const upkeep = scheduleStateUpkeep(state, retention, logger, timing);
  return {
    ...state,
    close() {
      upkeep.stop();
      return state.close();
    },
  };
}
