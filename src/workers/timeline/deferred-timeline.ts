import type { Clock } from "../../core/clock.js";
import type { Logger } from "../../core/log/logger.js";
import type { MessageStatus, TimelineEvent } from "../../core/timeline/timeline-event.js";
import {
  createTimelineRecorder,
  type TimelineRecorder,
  type TimelineRetention,
} from "../../core/timeline/timeline-recorder.js";
import type { TimelineStore, TimelineSubject } from "../../core/timeline/timeline-store.js";
import { within } from "../conversation/within.js";

/**
 * How long a flush is waited for at most: a shard that does not answer must not hold a
 * conversation's run (nor a request's `waitUntil`) for longer; its write goes on meanwhile.
 */
export const FLUSH_WAIT_MS = 2_000;

/** What a {@link DeferredTimeline} writes with. */
export interface DeferredTimelineDeps {
  readonly store: TimelineStore;
  readonly retention: TimelineRetention;
  readonly clock: Clock;
  readonly logger: Logger;
}

interface Recorded {
  readonly subject: TimelineSubject;
  readonly events: readonly TimelineEvent[];
  readonly status: MessageStatus | null;
}

/**
 * The timeline recorder of a Worker isolate or a conversation object: it gathers what is
 * recorded and writes nothing until {@link flush}, which the Worker's `fetch` hands to
 * `waitUntil` and a conversation object awaits before its run ends, so nothing is left in
 * memory when the invocation is over. Each flush writes with a core recorder of its own (the
 * core's batching into one write per shard), so that no request waits on another request's
 * I/O, which the platform does not allow; whichever request flushes first writes what every
 * request of the isolate gathered until then.
 */
export class DeferredTimeline implements TimelineRecorder {
  readonly on = true;
  readonly keepText: boolean;
  private gathered: Recorded[] = [];

  constructor(private readonly deps: DeferredTimelineDeps) {
    this.keepText = deps.retention.keepText;
  }

  /** Where the timeline is kept, for the admin API to read. */
  get store(): TimelineStore {
    return this.deps.store;
  }

  record(subject: TimelineSubject, events: readonly TimelineEvent[], status: MessageStatus | null): void {
    this.gathered.push({ subject, events, status });
  }

  /**
   * Writes what was gathered; resolves once written (or dropped with a warning), or after
   * {@link FLUSH_WAIT_MS} while the write goes on.
   */
  async flush(): Promise<void> {
    if (this.gathered.length === 0) return;
    const taken = this.gathered;
    this.gathered = [];
    // A recorder made now never prunes (it would a minute after it was made): the shards prune themselves.
    const recorder = createTimelineRecorder({ ...this.deps, schedule: () => undefined });
    for (const { subject, events, status } of taken) recorder.record(subject, events, status);
    await within(recorder.flush(), FLUSH_WAIT_MS);
  }

  /** The same as {@link flush}: nothing here runs on a timer. */
  close(): Promise<void> {
    return this.flush();
  }
}
