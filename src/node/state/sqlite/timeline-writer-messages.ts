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
  | { readonly kind: "close" };

/** The answer to request `id`: done, or why not. */
export interface FromTimelineWriter {
  readonly id: number;
  readonly error?: string;
}
