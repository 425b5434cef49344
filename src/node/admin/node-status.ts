import type { ChannelStatus, StatusReport, StatusSource } from "../../core/admin/status-report.js";
import { isoOrNull } from "../../core/admin/status-report.js";
import type { DeadLetterStore } from "../../core/dead-letters/dead-letter-store.js";
import type { JobQueue } from "../queue/job-queue.js";
import type { ConsoleTally } from "./console-tally.js";

/** What the Node status reads; everything is asked again on each report. */
export interface NodeStatusOptions {
  /** Every channel's job queue, by channel name (filled once the queues are built). */
  readonly queues: ReadonlyMap<string, JobQueue>;
  readonly tally: ConsoleTally;
  /** The admin API's dead-letter store. */
  readonly deadLetters: Pick<DeadLetterStore, "count">;
  /**
   * False with `delivery_thread` and `observability.metrics: false`: the thread then sends no
   * events to the main thread, so the brains' limiters cannot be seen from here.
   */
  readonly brainsVisible: boolean;
  readonly now: () => number;
  /** With replicas, this one's id. */
  readonly replica?: string | undefined;
}

/** Said in the report when the brains cannot be seen (see {@link NodeStatusOptions.brainsVisible}). */
const BRAINS_IN_THREAD =
  "Brains' calls in flight and pauses: with delivery_thread the brains run on the delivery thread, which reports them only with observability.metrics on.";

/**
 * `GET /admin/status` on Node: per channel the counts since start, the job queue's depth,
 * capacity and oldest pending message, and the receiver circuit's state; the brains' calls in
 * flight and pauses; the dead letters listed. It reads what the queues and limiters already
 * keep: a report costs a walk over the queues and one count of the dead-letter store.
 */
export function createNodeStatus(options: NodeStatusOptions): StatusSource {
  const { queues, tally } = options;
  return {
    async report(): Promise<StatusReport> {
      const channels: ChannelStatus[] = [...queues].map(([channel, queue]) => {
        const receiver = queue.receiver();
        return {
          channel,
          counts: tally.counts(channel),
          queue: {
            depth: queue.size,
            capacity: queue.capacity,
            oldest_pending_at: isoOrNull(queue.oldestAcceptedAt()),
          },
          receiver:
            receiver === undefined
              ? null
              : {
                  up: receiver.up,
                  since: isoOrNull(receiver.since),
                  waiting: receiver.waiting,
                  next_probe_at: isoOrNull(receiver.nextProbeAt),
                },
        };
      });
      let deadLetters: number | null;
      try {
        deadLetters = await options.deadLetters.count();
      } catch {
        deadLetters = null;
      }
      return {
        runtime: "node",
        ...(options.replica === undefined ? {} : { replica: options.replica }),
        generated_at: new Date(options.now()).toISOString(),
        counting_since: new Date(tally.since).toISOString(),
        channels,
        brains: options.brainsVisible ? tally.brains() : null,
        dead_letters: deadLetters,
        not_available: options.brainsVisible ? [] : [BRAINS_IN_THREAD],
      };
    },
  };
}
