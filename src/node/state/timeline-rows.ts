import type { MessageStatus } from "../../core/timeline/timeline-event.js";
import type { TimelineSummary } from "../../core/timeline/timeline-store.js";

/** The columns of a `timeline` row both SQL stores select (Postgres hands bigints back as text). */
export interface TimelineRow {
  readonly message_id: string;
  readonly channel: string;
  readonly conversation_id: string;
  readonly status: MessageStatus;
  readonly accepted_at: number | string;
  readonly updated_at: number | string;
}

/** The columns {@link TimelineRow} names, in order, for a SELECT. */
export const TIMELINE_COLUMNS = "message_id, channel, conversation_id, status, accepted_at, updated_at";

/** A row as the core's store port gives it back. */
export function summaryOf(row: TimelineRow): TimelineSummary {
  return {
    id: row.message_id,
    channel: row.channel,
    conversationId: row.conversation_id,
    status: row.status,
    acceptedAt: Number(row.accepted_at),
    updatedAt: Number(row.updated_at),
  };
}
