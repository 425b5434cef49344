import { z } from "zod";

/** Hours a conversation's turns are kept when `conversation_memory.retention_hours` is not set (the Workers expiry's span). */
export const DEFAULT_CONVERSATION_RETENTION_HOURS = 720;

/** `conversation_memory`: how long the turns a brain is sent as history are kept. */
export const conversationMemorySchema = z
  .strictObject({
    retention_hours: z
      .int({ error: "must be a whole number of hours" })
      .min(1, { error: "must be 1 or more" })
      .max(87_600, { error: "must be at most 87600 (ten years)" })
      .default(DEFAULT_CONVERSATION_RETENTION_HOURS)
      .describe(
        "Hours a conversation's turn is remembered after it happened: an older turn is never sent to a brain as history, on every backend, and each backend deletes it (in memory when the conversation is next used or any is written, SQLite and Postgres by an hourly prune, Workers at the conversation's next message). See docs/brains.md#conversation-memory.",
      ),
  })
  .describe(
    "Conversation memory: the turns kept for brains with max_history above 0 (openai, http, workers-ai). On Node a change needs a restart (a reload refuses it).",
  );
