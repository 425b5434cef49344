import { errorMessage } from "../core/channel-error.js";
import { systemClock } from "../core/clock.js";
import type { Config } from "../core/config/config-schema.js";
import type { ReplayTimeline } from "../core/dead-letters/replay-timeline.js";
import { createLevelLogger } from "../core/log/logger.js";
import { createTimelineRecorder, timelineIsOn, timelineRetention } from "../core/timeline/timeline-recorder.js";
import type { TimelineStore } from "../core/timeline/timeline-store.js";
import type { CliIo } from "./cli-io.js";

/** Where one `dead-letters replay` records its `replayed` events, and how it lets go of it. */
export interface CliReplayTimeline {
  /** Undefined when the configuration turns the timeline off. */
  readonly timeline: ReplayTimeline | undefined;
  /** Writes what was recorded (a failure is said on stderr: the replay itself stands). */
  close(): Promise<void>;
}

/** What a command that replays nothing, or a configuration without a timeline, records in: nothing. */
export const NO_REPLAY_TIMELINE: CliReplayTimeline = { timeline: undefined, close: () => Promise.resolve() };

/**
 * The timeline a replay from the CLI records in, as the admin API's replay does: the store the
 * service keeps (`open` makes it, only when the configuration keeps a timeline, so that a
 * timeline turned off leaves no file behind). The events are written when the command closes it.
 */
export function openCliReplayTimeline(config: Config, open: () => TimelineStore, io: CliIo): CliReplayTimeline {
  const retention = timelineRetention(config.timeline, true);
  if (!timelineIsOn(retention)) return NO_REPLAY_TIMELINE;
  const logger = createLevelLogger((_level, msg, fields) => {
    const error = fields?.error;
    io.err(`${msg}${typeof error === "string" ? `: ${error}` : ""}\n`);
  }, "warn");
  let store: TimelineStore;
  try {
    store = open();
  } catch (error) {
    io.err(`cannot open the message timeline, so this replay is not recorded in it: ${errorMessage(error)}\n`);
    return NO_REPLAY_TIMELINE;
  }
  const recorder = createTimelineRecorder({
    store,
    retention,
    clock: systemClock,
    logger,
    // Nothing waits for a timer: the command writes at its close.
    schedule: (task, ms) => setTimeout(task, ms).unref(),
  });
  return { timeline: { recorder, now: () => systemClock.now() }, close: () => recorder.close() };
}
