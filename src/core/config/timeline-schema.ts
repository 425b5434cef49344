import { z } from "zod";

/** Hours a message's timeline is kept when `timeline.retention_hours` is not set. */
export const DEFAULT_TIMELINE_HOURS = 72;
/** Messages whose timelines are kept in memory when `timeline.max_messages` is not set. */
export const DEFAULT_TIMELINE_MESSAGES_IN_MEMORY = 10_000;
/** Messages whose timelines are kept in SQLite, Postgres or a Durable Object when `timeline.max_messages` is not set. */
export const DEFAULT_TIMELINE_MESSAGES_STORED = 1_000_000;

/** `timeline`: what the service keeps of each message's life for the admin API, the CLI and the console. */
export const timelineSchema = z
  .strictObject({
    retention_hours: z
      .int({ error: "must be a whole number of hours" })
      .min(0, { error: "must be 0 (off) or more" })
      .max(8_760, { error: "must be at most 8760 (a year)" })
      .default(DEFAULT_TIMELINE_HOURS)
      .describe(
        "Hours a message's timeline is kept after it was accepted, or after it was last written when that is later (a dead letter replayed after the window); 0 turns the timeline off. Keep it above every channel's delivery.max_age_ms, so that a message waiting out a receiver's outage stays in view until it is delivered or dead-lettered (config check warns otherwise).",
      ),
    max_messages: z
      .int({ error: "must be a whole number" })
      .min(0, { error: "must be 0 (off) or more" })
      .max(100_000_000, { error: "must be at most 100000000" })
      .optional()
      .describe(
        "Messages whose timelines are kept, the most recently accepted; 0 turns the timeline off. Default 10000 in memory, 1000000 with state_dir, Postgres or on Workers (where each of the 16 timeline shards keeps its share: see docs/workers.md#message-timeline).",
      ),
    keep_text: z
      .boolean({ error: "must be true or false" })
      .default(false)
      .describe("Keep the message's text and each reply's body in the timeline. Off by default: only facts are kept."),
  })
  .describe(
    "The timeline of every message (accepted, brain calls, reply POSTs, how it ended) behind GET /admin/messages, `webhook-channel messages` and the console. See docs/operations.md#where-is-message-x.",
  );
