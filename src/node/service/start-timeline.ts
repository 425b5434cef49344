import type { Clock } from "../../core/clock.js";
import type { Config } from "../../core/config/config-schema.js";
import type { Logger } from "../../core/log/logger.js";
import {
  createTimelineRecorder,
  noTimeline,
  type TimelineRecorder,
  timelineRetention,
} from "../../core/timeline/timeline-recorder.js";
import type { StateBackend } from "../state/state-backend.js";

/**
 * The recorder of every message's timeline over the backend's store. In memory without the
 * admin API nothing could ever read it, so nothing is recorded.
 */
export function startTimeline(config: Config, state: StateBackend, clock: Clock, logger: Logger): TimelineRecorder {
  if (state.mode === "memory" && config.admin === undefined) return noTimeline;
  return createTimelineRecorder({
    store: state.timeline,
    retention: timelineRetention(config.timeline, state.mode !== "memory"),
    clock,
    logger,
    schedule: (task, ms) => {
      setTimeout(task, ms).unref();
    },
  });
}
