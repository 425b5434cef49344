import type { TimelineRecorder } from "../timeline/timeline-recorder.js";
import type { TimelineSubject } from "../timeline/timeline-store.js";

/** Where replays are recorded in their messages' timelines. */
export interface ReplayTimeline {
  readonly recorder: TimelineRecorder;
  readonly now: () => number;
}

/**
 * Records a `replayed` event for each message a replay moved back to the queue. Callers pass
 * what the store says it took, not a list read before: a letter deleted or replayed elsewhere
 * meanwhile gets no "replayed", and one that another replay took first (it may be delivered by
 * now) is not moved back to "replayed".
 */
export function recordReplays(timeline: ReplayTimeline | undefined, replayed: readonly TimelineSubject[]): void {
  if (timeline === undefined || !timeline.recorder.on || replayed.length === 0) return;
  const at = timeline.now();
  for (const letter of replayed) timeline.recorder.record(letter, [{ type: "replayed", at }], "replayed");
}
