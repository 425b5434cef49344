import type { ConfigProblem } from "./config-problem.js";
import type { Config } from "./config-schema.js";
import { DEFAULT_TIMELINE_MESSAGES_IN_MEMORY, DEFAULT_TIMELINE_MESSAGES_STORED } from "./timeline-schema.js";

const HOUR_MS = 3_600_000;

/**
 * Warnings about a message timeline that would drop messages still under way, so that "where is
 * message X?" has no answer when it matters most, during a receiver's outage: a window no longer
 * than the time a message may wait (a held message is dead-lettered at its channel's
 * `delivery.max_age_ms`), and, on Node, a size bound below what the channels' buffers hold (on
 * Postgres, what one replica's hold).
 * None while nothing is recorded: the timeline is off, or in memory without `admin`.
 */
export function timelineWarnings(config: Config): ConfigProblem[] {
  const { retention_hours: hours, max_messages: maxMessages } = config.timeline;
  const stored = config.state_dir !== undefined || config.postgres_url_env !== undefined;
  if (hours === 0 || maxMessages === 0 || (!stored && config.admin === undefined)) return [];
  const warnings: ConfigProblem[] = [];
  let longest: { readonly index: number; readonly ms: number } | undefined;
  config.channels.forEach((channel, index) => {
    const ms = channel.webhook.delivery.max_age_ms;
    if (longest === undefined || ms > longest.ms) longest = { index, ms };
  });
  // An hour of room at least: the age counts from a step's first attempt, and a message may wait
  // before it (its turn in its conversation, the brain's answer).
  const needed = longest === undefined ? 0 : Math.ceil(longest.ms / HOUR_MS) + 1;
  if (longest !== undefined && hours < needed) {
    warnings.push({
      path: "timeline.retention_hours",
      message: `${hours} hours leaves less than an hour past channels[${longest.index}].webhook.delivery.max_age_ms (${longest.ms} ms): a message that waits that long (a receiver down) leaves the timeline before it is delivered or dead-lettered`,
      fix: `raise timeline.retention_hours to ${needed} or more`,
    });
  }
  const kept = maxMessages ?? (stored ? DEFAULT_TIMELINE_MESSAGES_STORED : DEFAULT_TIMELINE_MESSAGES_IN_MEMORY);
  const buffered = config.channels.reduce((sum, channel) => sum + channel.webhook.buffer_capacity, 0);
  if (kept < buffered) {
    warnings.push({
      path: "timeline.max_messages",
      message: `${kept} is below what the channels' buffers hold on Node (buffer_capacity, ${buffered} in all): in an outage that fills them, the messages waiting longest leave the timeline first`,
      fix: `raise timeline.max_messages to ${buffered} or more, or lower buffer_capacity`,
    });
  }
  return warnings;
}
