import type { TimelinePageQuery } from "../../../core/timeline/timeline-store.js";
import { TIMELINE_COLUMNS } from "../timeline-rows.js";

/**
 * The statement of a timeline page, newest first, with only the filters it has, so that the
 * planner picks the index that serves it (the channel's, the status's, the conversation's, or
 * the acceptance time's) and reads it in the page's order.
 */
export function postgresTimelinePage(query: TimelinePageQuery): { text: string; values: unknown[] } {
  const where: string[] = [];
  const values: unknown[] = [];
  const add = (clause: (at: string) => string, ...given: unknown[]): void => {
    values.push(...given);
    where.push(clause(`$${values.length}`));
  };
  if (query.conversationId !== undefined) add((at) => `conversation_id = ${at}`, query.conversationId);
  if (query.channel !== undefined) add((at) => `channel = ${at}`, query.channel);
  if (query.status !== undefined) add((at) => `status = ${at}`, query.status);
  if (query.since !== undefined) add((at) => `accepted_at >= ${at}`, query.since);
  if (query.before !== undefined) {
    values.push(query.before.acceptedAt, query.before.id);
    where.push(`(accepted_at, message_id) < ($${values.length - 1}::bigint, $${values.length}::text)`);
  }
  values.push(query.limit);
  const filter = where.length === 0 ? "" : `WHERE ${where.join(" AND ")}`;
  return {
    text: `SELECT ${TIMELINE_COLUMNS} FROM webhook_channel.timeline ${filter} ORDER BY accepted_at DESC, message_id DESC LIMIT $${values.length}`,
    values,
  };
}
