import { fromEventLines, toEventLines } from "../../../core/timeline/event-lines.js";
import {
  type ActivityCount,
  inTimeOrder,
  type StoredTimeline,
  type TimelinePageQuery,
  type TimelineStore,
} from "../../../core/timeline/timeline-store.js";
import { summaryOf, TIMELINE_COLUMNS, type TimelineRow } from "../timeline-rows.js";
import type { StateDb } from "./sqlite-state.js";

const COLUMNS = TIMELINE_COLUMNS;
const FILTERS = `(@channel IS NULL OR channel = @channel)
  AND (@status IS NULL OR status = @status)
  AND (@since IS NULL OR accepted_at >= @since)
  AND (@before IS NULL OR accepted_at < @before OR (accepted_at = @before AND message_id < @beforeId))`;

/**
 * The timeline of `state_dir`: the `timeline` and `timeline_activity` tables. A batch is one
 * transaction of its own, outside the group commit of jobs, since a timeline write never decides
 * anything a message's path waits for.
 */
export function createSqliteTimelineStore(db: StateDb): TimelineStore {
  // The status moves only with a write that has one and is no older than the row's.
  const upsert = db.prepare(
    `INSERT INTO timeline (${COLUMNS}, events)
     VALUES (@id, @channel, @conversationId, coalesce(@status, 'accepted'), @acceptedAt, @updatedAt, @events)
     ON CONFLICT (message_id) DO UPDATE SET
       events = timeline.events || excluded.events,
       status = CASE WHEN @status IS NOT NULL AND excluded.updated_at >= timeline.updated_at
                     THEN excluded.status ELSE timeline.status END,
       updated_at = max(timeline.updated_at, excluded.updated_at)`,
  );
  const addCount = db.prepare(
    `INSERT INTO timeline_activity (minute, series, count) VALUES (?, ?, ?)
     ON CONFLICT (minute, series) DO UPDATE SET count = count + excluded.count`,
  );
  const one = db.prepare(`SELECT ${COLUMNS}, events FROM timeline WHERE message_id = ?`);
  const page = db.prepare(
    `SELECT ${COLUMNS} FROM timeline WHERE ${FILTERS}
     ORDER BY accepted_at DESC, message_id DESC LIMIT @limit`,
  );
  // Its own statement, so that the conversation's index serves it.
  const pageOfConversation = db.prepare(
    `SELECT ${COLUMNS} FROM timeline WHERE conversation_id = @conversationId AND ${FILTERS}
     ORDER BY accepted_at DESC, message_id DESC LIMIT @limit`,
  );
  const activity = db.prepare("SELECT minute, series, count FROM timeline_activity WHERE minute >= ?");
  const cutoff = db.prepare("SELECT accepted_at FROM timeline ORDER BY accepted_at DESC LIMIT 1 OFFSET ?");
  const forget = db.prepare("DELETE FROM timeline WHERE accepted_at < ?");
  const forgetMinutes = db.prepare("DELETE FROM timeline_activity WHERE minute < ?");

  const write = db.transaction((writes: Parameters<TimelineStore["write"]>[0], counts: readonly ActivityCount[]) => {
    for (const entry of writes) {
      upsert.run({
        id: entry.id,
        channel: entry.channel,
        conversationId: entry.conversationId,
        status: entry.status,
        acceptedAt: entry.acceptedAt,
        updatedAt: entry.updatedAt,
        events: toEventLines(entry.events),
      });
    }
    for (const count of counts) addCount.run(count.minute, count.series, count.count);
  });
  const prune = db.transaction((before: number, keep: number, minutesBefore: number) => {
    const kept = cutoff.get(keep) as { accepted_at: number } | undefined;
    forget.run(kept === undefined ? before : Math.max(before, kept.accepted_at + 1));
    forgetMinutes.run(minutesBefore);
  });

  return {
    write(writes, counts) {
      write(writes, counts);
    },
    one(id) {
      const row = one.get(id) as (TimelineRow & { readonly events: string }) | undefined;
      return row === undefined ? undefined : withEvents(row);
    },
    page(query) {
      const params = pageParams(query);
      const rows = (query.conversationId === undefined ? page : pageOfConversation).all(params) as TimelineRow[];
      return rows.map(summaryOf);
    },
    activity(since) {
      return activity.all(since) as ActivityCount[];
    },
    prune({ before, keep, minutesBefore }) {
      prune(before, keep, minutesBefore);
    },
  };
}

function pageParams(query: TimelinePageQuery): Record<string, string | number | null> {
  return {
    channel: query.channel ?? null,
    conversationId: query.conversationId ?? null,
    status: query.status ?? null,
    since: query.since ?? null,
    before: query.before?.acceptedAt ?? null,
    beforeId: query.before?.id ?? "",
    limit: query.limit,
  };
}

function withEvents(row: TimelineRow & { readonly events: string }): StoredTimeline {
  return { ...summaryOf(row), events: inTimeOrder(fromEventLines(row.events)) };
}
