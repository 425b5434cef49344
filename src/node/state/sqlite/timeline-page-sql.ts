import type { TimelinePageQuery } from "../../../core/timeline/timeline-store.js";
import { TIMELINE_COLUMNS } from "../timeline-rows.js";

/** A page's statement and its named parameters. */
export interface TimelinePageSql {
  /** The SQL, one text per combination of filters: the key its prepared statement is kept under. */
  readonly sql: string;
  readonly params: Readonly<Record<string, string | number>>;
}

/**
 * The statement of one page of the SQLite timeline with only the filters `query` has. A filter
 * written `(@x IS NULL OR …)` cannot pick an index (the plan is made once, for any value), so
 * each combination has its own text: the conversation, channel and status then each search
 * their index (`timeline-db.ts`), the acceptance time and the cursor search the acceptance
 * index, and every index but the conversation's hands rows back in the page's order (a
 * conversation's few are sorted).
 */
export function timelinePageSql(query: TimelinePageQuery): TimelinePageSql {
  const where: string[] = [];
  const params: Record<string, string | number> = { limit: query.limit };
  if (query.conversationId !== undefined) {
    where.push("conversation_id = @conversationId");
    params.conversationId = query.conversationId;
  }
  if (query.channel !== undefined) {
    where.push("channel = @channel");
    params.channel = query.channel;
  }
  if (query.status !== undefined) {
    where.push("status = @status");
    params.status = query.status;
  }
  if (query.since !== undefined) {
    where.push("accepted_at >= @since");
    params.since = query.since;
  }
  if (query.before !== undefined) {
    // A row value: one range over (accepted_at, message_id), which the indexes end with.
    where.push("(accepted_at, message_id) < (@before, @beforeId)");
    params.before = query.before.acceptedAt;
    params.beforeId = query.before.id;
  }
  const filter = where.length === 0 ? "" : `WHERE ${where.join(" AND ")}`;
  // A conversation holds few messages, but without statistics SQLite would rather walk the
  // channel's index, which needs no sort, than search the conversation's: told which.
  const table = query.conversationId === undefined ? "timeline" : "timeline INDEXED BY timeline_conversation";
  return {
    sql: `SELECT ${TIMELINE_COLUMNS} FROM ${table} ${filter} ORDER BY accepted_at DESC, message_id DESC LIMIT @limit`,
    params,
  };
}
