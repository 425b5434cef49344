import type { Statement } from "better-sqlite3";
import { fromEventLines, toEventLines } from "../../../core/timeline/event-lines.js";
import { timelinePruneBound } from "../../../core/timeline/timeline-prune-bound.js";
import {
  type ActivityCount,
  inTimeOrder,
  type StoredTimeline,
  type TimelinePrune,
  type TimelineStore,
} from "../../../core/timeline/timeline-store.js";
import { summaryOf, TIMELINE_COLUMNS, type TimelineRow } from "../timeline-rows.js";
import type { StateDb } from "./sqlite-state.js";
import { timelinePageSql } from "./timeline-page-sql.js";

const COLUMNS = TIMELINE_COLUMNS;

/**
 * Rows a prune deletes per statement. A prune runs on the timeline writer thread, and each
 * statement is a transaction of its own: a short one, so that a large cut (a bound lowered, a
 * long stop) neither holds the file's write lock long nor grows the write-ahead log by the
 * whole cut at once.
 */
const SQLITE_PRUNE_BATCH = 1_000;

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
  // One prepared statement per combination of filters a page has, made when first asked for.
  const pages = new Map<string, Statement>();
  const activity = db.prepare("SELECT minute, series, count FROM timeline_activity WHERE minute >= ?");
  const oldestKept = db.prepare(
    "SELECT accepted_at, message_id FROM timeline ORDER BY accepted_at DESC, message_id DESC LIMIT 1 OFFSET ?",
  );
  // Each from the start of the acceptance index, in its order: the oldest go first.
  const forgetBefore = db.prepare(
    `DELETE FROM timeline WHERE rowid IN (
       SELECT rowid FROM timeline WHERE accepted_at < @acceptedAt AND updated_at < @activeSince
       ORDER BY accepted_at, message_id LIMIT @batch)`,
  );
  const forgetBelow = db.prepare(
    `DELETE FROM timeline WHERE rowid IN (
       SELECT rowid FROM timeline WHERE (accepted_at, message_id) < (@acceptedAt, @id)
       ORDER BY accepted_at, message_id LIMIT @batch)`,
  );
  const forgetMinutes = db.prepare(
    "DELETE FROM timeline_activity WHERE rowid IN (SELECT rowid FROM timeline_activity WHERE minute < ? LIMIT ?)",
  );

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
  const prune = (limits: TimelinePrune): void => {
    const kept =
      limits.keep > 0
        ? (oldestKept.get(limits.keep - 1) as { accepted_at: number; message_id: string } | undefined)
        : undefined;
    const bound = timelinePruneBound(limits, kept && { acceptedAt: kept.accepted_at, id: kept.message_id });
    const batch = SQLITE_PRUNE_BATCH;
    const forgetOnce = (): number =>
      bound.id === null
        ? forgetBefore.run({ acceptedAt: bound.acceptedAt, activeSince: bound.activeSince, batch }).changes
        : forgetBelow.run({ acceptedAt: bound.acceptedAt, id: bound.id, batch }).changes;
    // A batch short of full was the last.
    while (forgetOnce() === batch);
    while (forgetMinutes.run(limits.minutesBefore, batch).changes === batch);
  };

  return {
    write(writes, counts) {
      write(writes, counts);
    },
    one(id) {
      const row = one.get(id) as (TimelineRow & { readonly events: string }) | undefined;
      return row === undefined ? undefined : withEvents(row);
    },
    page(query) {
      const { sql, params } = timelinePageSql(query);
      let page = pages.get(sql);
      if (page === undefined) {
        page = db.prepare(sql);
        pages.set(sql, page);
      }
      return (page.all(params) as TimelineRow[]).map(summaryOf);
    },
    activity(since) {
      return activity.all(since) as ActivityCount[];
    },
    prune(limits) {
      prune(limits);
    },
  };
}

function withEvents(row: TimelineRow & { readonly events: string }): StoredTimeline {
  return { ...summaryOf(row), events: inTimeOrder(fromEventLines(row.events)) };
}
