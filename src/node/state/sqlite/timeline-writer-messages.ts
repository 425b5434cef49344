import type { ActivityCount, TimelinePrune, TimelineWrite } from "../../../core/timeline/timeline-store.js";

/** What the timeline writer thread is started with (its `workerData`). */
export interface TimelineWriterData {
  readonly stateDir: string;
}

/** A message to the timeline writer thread. */
export type ToTimelineWriter =
  | {
      readonly kind: "write";
      readonly id: number;
      readonly writes: readonly TimelineWrite[];
      readonly counts: readonly ActivityCount[];
    }
  | { readonly kind: "prune"; readonly id: number; readonly limits: TimelinePrune }
  /** Commit what was written so far, so that another connection reads it. */
  | { readonly kind: "commit"; readonly id: number }
  | { readonly kind: "close" };

/**
 * The answer to request `id`: done, or why not. A write is answered once it is made in the
 * transaction still open, not once committed.
 */
export interface FromTimelineWriter {
  readonly id: number;
  readonly error?: string;
}

/** A commit that failed: the `messages` written since the one before it are not kept. */
export interface TimelineWriterLoss {
  readonly kind: "lost";
  readonly messages: number;
  readonly error: string;
}
