import { systemClock } from "../../core/clock.js";
import { timelineIsOn, timelineRetention } from "../../core/timeline/timeline-recorder.js";
import type { EnvironmentParts } from "../environment-parts.js";
import type { WorkerEnv } from "../worker-env.js";
import { DeferredTimeline } from "./deferred-timeline.js";
import { createDurableTimelineStore } from "./durable-timeline-store.js";

/**
 * The message timeline of a Worker environment, over its shard objects; undefined when it is
 * off (`timeline.retention_hours` or `timeline.max_messages` 0) or when nothing could read it:
 * without `admin` there is no API to ask, so nothing is recorded and no message costs more.
 * Cheap to make: the Worker makes one per isolate, a conversation object one per run.
 */
export function timelineFor(env: WorkerEnv, parts: EnvironmentParts): DeferredTimeline | undefined {
  if (parts.config.admin === undefined) return undefined;
  const retention = timelineRetention(parts.config.timeline, true);
  if (!timelineIsOn(retention)) return undefined;
  const store = createDurableTimelineStore(env.TIMELINE_SHARDS, { logger: parts.logger });
  return new DeferredTimeline({ store, retention, clock: systemClock, logger: parts.logger });
}
