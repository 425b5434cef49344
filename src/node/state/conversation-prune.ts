import { errorMessage } from "../../core/channel-error.js";
import { cutoffOf, type MemoryRetention } from "../../core/conversation/memory-retention.js";
import type { Logger } from "../../core/log/logger.js";
import type { StateBackend } from "./state-backend.js";

/** When the prune runs: once shortly after the start, then about hourly. */
export interface ConversationPruneTiming {
  readonly firstMs: number;
  readonly everyMs: number;
}

/** Shortly after a start, when the start's own work is done; then hourly, as the retention counts in hours. */
export const CONVERSATION_PRUNE_TIMING: ConversationPruneTiming = { firstMs: 60_000, everyMs: 3_600_000 };

/** A running prune schedule. */
export interface ConversationPrune {
  /** Clears the timer; a prune under way finishes its batch, and its outcome is not logged. */
  stop(): void;
}

/**
 * Deletes the conversation turns older than the retention from `state`, off the message path:
 * on an unref'd timer (it never keeps the process alive), each run after the previous one ended,
 * so two never overlap. A failed run is logged at warn, once until a run succeeds again (an
 * unreachable database would otherwise say the same every hour), and never thrown: the next
 * run tries again, and meanwhile the history still leaves the old turns out.
 */
export function scheduleConversationPrune(
  state: Pick<StateBackend, "pruneConversations">,
  retention: MemoryRetention,
  logger: Logger,
  timing: ConversationPruneTiming = CONVERSATION_PRUNE_TIMING,
): ConversationPrune {
  let timer: ReturnType<typeof setTimeout> | undefined;
  let stopped = false;
  let failing = false;

  const run = async (): Promise<void> => {
    try {
      const deleted = await state.pruneConversations(cutoffOf(retention));
      if (stopped) return;
      if (failing) logger.info("pruning conversation memory again", { deleted_turns: deleted });
      else if (deleted > 0) logger.debug("pruned conversation memory", { deleted_turns: deleted });
      failing = false;
    } catch (error) {
      if (stopped || failing) return;
      failing = true;
      logger.warn("cannot prune conversation memory; old turns stay stored until a prune succeeds", {
        error: errorMessage(error),
      });
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
 * `state`, pruning its conversation memory on the schedule of {@link scheduleConversationPrune}
 * until it is closed (the schedule stops before the state does).
 */
export function withConversationPrune(
  state: StateBackend,
  retention: MemoryRetention,
  logger: Logger,
  timing?: ConversationPruneTiming,
): StateBackend {
  const prune = scheduleConversationPrune(state, retention, logger, timing);
  return {
    ...state,
    close() {
      prune.stop();
      return state.close();
    },
  };
}
