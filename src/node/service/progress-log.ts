import type { Logger } from "../../core/log/logger.js";
import type { JobQueue } from "../queue/job-queue.js";
import type { JobQueueEvent } from "../queue/job-queue-options.js";

/** How often the progress line is written while there is traffic. */
export const PROGRESS_INTERVAL_MS = 10_000;

/** What the progress reporter reads and how it keeps time. */
export interface ProgressLogOptions {
  readonly logger: Logger;
  /** The job queues of every channel, read for depth and age when a line is written. */
  readonly queues: () => Iterable<JobQueue>;
  readonly now: () => number;
  /** Between two lines; {@link PROGRESS_INTERVAL_MS} unless a test shortens it. */
  readonly intervalMs?: number | undefined;
}

/** Counts queue events and writes one `progress` line per interval while anything happens. */
export interface ProgressLog {
  /** Counts one event of a job queue (its `onEvent`). */
  record(event: JobQueueEvent): void;
  /** Writes the line of the interval now, if there is anything to say (the timer calls it). */
  flush(): void;
  /** Stops the timer; no more lines. */
  stop(): void;
}

/**
 * Starts the progress reporter: every interval, an `info` line with the messages accepted,
 * finished (`delivered`), retried and dead-lettered in that interval, and the queues' depth
 * and oldest pending age, so an operator can see replies flowing or backing up without debug
 * logs. Nothing is written for an idle interval (no event and nothing pending), so a quiet
 * service stays quiet. The timer is unref'd: it never keeps the process alive.
 */
export function startProgressLog(options: ProgressLogOptions): ProgressLog {
  const { logger, now } = options;
  let counts = { accepted: 0, delivered: 0, retrying: 0, dead_lettered: 0 };

  const flush = (): void => {
    let depth = 0;
    let oldest: number | undefined;
    for (const queue of options.queues()) {
      depth += queue.size;
      const at = queue.oldestAcceptedAt();
      if (at !== undefined && (oldest === undefined || at < oldest)) oldest = at;
    }
    const interval = counts;
    counts = { accepted: 0, delivered: 0, retrying: 0, dead_lettered: 0 };
    const events = interval.accepted + interval.delivered + interval.retrying + interval.dead_lettered;
    if (events === 0 && depth === 0) return;
    logger.info("progress", {
      ...interval,
      queue_depth: depth,
      oldest_pending_ms: oldest === undefined ? 0 : Math.max(0, now() - oldest),
    });
  };

  const timer = setInterval(flush, options.intervalMs ?? PROGRESS_INTERVAL_MS);
  timer.unref();
  return {
    record(event) {
      if (event === "accepted") counts.accepted += 1;
      else if (event === "done") counts.delivered += 1;
      else if (event === "retry") counts.retrying += 1;
      else if (event === "dead") counts.dead_lettered += 1;
      // A job held for its receiver is neither: the receiver's own lines say it is down.
    },
    flush,
    stop() {
      clearInterval(timer);
    },
  };
}
