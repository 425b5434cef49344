import { fromEventLines, toEventLines } from "../../core/timeline/event-lines.js";
import type { MessageStatus } from "../../core/timeline/timeline-event.js";
import { type TimelinePruneBound, timelinePruneBound } from "../../core/timeline/timeline-prune-bound.js";
import {
  type ActivityCount,
  inTimeOrder,
  type StoredTimeline,
  type TimelinePageQuery,
  type TimelinePrune,
  type TimelineSummary,
  type TimelineWrite,
} from "../../core/timeline/timeline-store.js";
import type { MeteredSql } from "../metered-sql.js";

type SummaryRow = {
  message_id: string;
  channel: string;
  conversation_id: string;
  status: string;
  accepted_at: number;
  updated_at: number;
};

const COLUMNS = "message_id, channel, conversation_id, status, accepted_at, updated_at";

/**
 * Creates a shard's tables when missing (idempotent, synchronous: it runs in the object's
 * constructor). `timeline` is keyed by message id without a rowid, so a new message is one row
 * and one entry of `timeline_accepted`, and a later write one row: no indexed column ever
 * changes. That index gives the list its order, and carries the channel and conversation that
 * pages filter on (a filtered page walks it until it has the page). `timeline_activity` holds
 * a minute's counts as one JSON object, so a write adds to one row whatever it counts.
 */
export function createTimelineTables(sql: MeteredSql): void {
  sql.run(`CREATE TABLE IF NOT EXISTS timeline (
    message_id TEXT PRIMARY KEY,
    channel TEXT NOT NULL,
    conversation_id TEXT NOT NULL,
    status TEXT NOT NULL,
    accepted_at INTEGER NOT NULL,
    updated_at INTEGER NOT NULL,
    events TEXT NOT NULL
  ) WITHOUT ROWID`);
  sql.run(
    "CREATE INDEX IF NOT EXISTS timeline_accepted ON timeline (accepted_at, message_id, channel, conversation_id)",
  );
  sql.run("CREATE TABLE IF NOT EXISTS timeline_activity (minute INTEGER PRIMARY KEY, counts TEXT NOT NULL)");
}

/**
 * One timeline shard's rows, in its object's SQLite: the timeline store's semantics (as on
 * SQLite and Postgres) for the messages whose ids hash to this shard. Called synchronously
 * inside the object, so each call is one transaction.
 */
export class TimelineShardTable {
  constructor(private readonly sql: MeteredSql) {}

  /**
   * Appends each write's events to its message's row, creating it when new; the status moves
   * only with a write that has one and is no older than the row. Adds `activity` to the minute
   * counts. Returns the ids of messages whose events could not be stored (a row past what one
   * SQLite value holds): the others are stored all the same.
   */
  write(writes: readonly TimelineWrite[], activity: readonly ActivityCount[]): string[] {
    const refused: string[] = [];
    for (const entry of writes) {
      try {
        this.sql.run(
          `INSERT INTO timeline (${COLUMNS}, events)
           VALUES (?, ?, ?, coalesce(?, 'accepted'), ?, ?, ?)
           ON CONFLICT (message_id) DO UPDATE SET
             events = timeline.events || excluded.events,
             status = CASE WHEN ? IS NOT NULL AND excluded.updated_at >= timeline.updated_at
                           THEN excluded.status ELSE timeline.status END,
             updated_at = max(timeline.updated_at, excluded.updated_at)`,
          entry.id,
          entry.channel,
          entry.conversationId,
          entry.status,
          entry.acceptedAt,
          entry.updatedAt,
          toEventLines(entry.events),
          entry.status,
        );
      } catch {
        refused.push(entry.id);
      }
    }
    for (const [minute, added] of byMinute(activity)) {
      const kept = this.sql.first<{ counts: string }>("SELECT counts FROM timeline_activity WHERE minute = ?", minute);
      const counts = kept === undefined ? {} : readCounts(kept.counts);
      for (const [series, count] of added) counts[series] = (counts[series] ?? 0) + count;
      this.sql.run(
        `INSERT INTO timeline_activity (minute, counts) VALUES (?, ?)
         ON CONFLICT (minute) DO UPDATE SET counts = excluded.counts`,
        minute,
        JSON.stringify(counts),
      );
    }
    return refused;
  }

  /** One message's row with its events, oldest first; null when there is none. */
  one(id: string): StoredTimeline | null {
    const row = this.sql.first<SummaryRow & { events: string }>(
      `SELECT ${COLUMNS}, events FROM timeline WHERE message_id = ?`,
      id,
    );
    return row === undefined ? null : { ...summaryOf(row), events: inTimeOrder(fromEventLines(row.events)) };
  }

  /** A page of rows, newest (by acceptance, then id) first: only the conditions asked for, so the index serves ranges. */
  page(query: TimelinePageQuery): TimelineSummary[] {
    const where: string[] = [];
    const bindings: SqlStorageValue[] = [];
    const when = (condition: string, ...values: SqlStorageValue[]) => {
      where.push(condition);
      bindings.push(...values);
    };
    if (query.channel !== undefined) when("channel = ?", query.channel);
    if (query.conversationId !== undefined) when("conversation_id = ?", query.conversationId);
    if (query.status !== undefined) when("status = ?", query.status);
    if (query.since !== undefined) when("accepted_at >= ?", query.since);
    if (query.before !== undefined)
      when("(accepted_at, message_id) < (?, ?)", query.before.acceptedAt, query.before.id);
    const rows = this.sql.all<SummaryRow>(
      `SELECT ${COLUMNS} FROM timeline ${where.length === 0 ? "" : `WHERE ${where.join(" AND ")}`}
       ORDER BY accepted_at DESC, message_id DESC LIMIT ?`,
      ...bindings,
      query.limit,
    );
    return rows.map(summaryOf);
  }

  /** Minute counts from `since` (epoch ms) on. */
  activity(since: number): ActivityCount[] {
    const counts: ActivityCount[] = [];
    for (const row of this.sql.all<{ minute: number; counts: string }>(
      "SELECT minute, counts FROM timeline_activity WHERE minute >= ?",
      since,
    )) {
      for (const [series, count] of Object.entries(readCounts(row.counts)))
        counts.push({ minute: row.minute, series, count });
    }
    return counts;
  }

  /**
   * Where a prune by `limits` cuts (see {@link TimelinePruneBound}): the window's start, or the
   * oldest of the `keep` most recently accepted, whichever is later.
   */
  pruneBound(limits: TimelinePrune): TimelinePruneBound {
    const kept =
      limits.keep > 0
        ? this.sql.first<{ accepted_at: number; message_id: string }>(
            "SELECT accepted_at, message_id FROM timeline ORDER BY accepted_at DESC, message_id DESC LIMIT 1 OFFSET ?",
            limits.keep - 1,
          )
        : undefined;
    return timelinePruneBound(limits, kept && { acceptedAt: kept.accepted_at, id: kept.message_id });
  }

  /**
   * Forgets at most `batch` messages before `bound`, the oldest first, and at most `batch`
   * minute counts before `minutesBefore`; true when a full batch went, so more may be left.
   */
  pruneBatch(bound: TimelinePruneBound, minutesBefore: number, batch: number): boolean {
    const before =
      bound.id === null
        ? this.sql.all(
            `DELETE FROM timeline WHERE message_id IN (
               SELECT message_id FROM timeline WHERE accepted_at < ? AND updated_at < ?
               ORDER BY accepted_at, message_id LIMIT ?)
             RETURNING 1`,
            bound.acceptedAt,
            bound.activeSince,
            batch,
          )
        : this.sql.all(
            `DELETE FROM timeline WHERE message_id IN (
               SELECT message_id FROM timeline WHERE (accepted_at, message_id) < (?, ?)
               ORDER BY accepted_at, message_id LIMIT ?)
             RETURNING 1`,
            bound.acceptedAt,
            bound.id,
            batch,
          );
    const minutes = this.sql.all(
      `DELETE FROM timeline_activity WHERE minute IN (
         SELECT minute FROM timeline_activity WHERE minute < ? ORDER BY minute LIMIT ?)
       RETURNING 1`,
      minutesBefore,
      batch,
    );
    return before.length === batch || minutes.length === batch;
  }

  /** True when the shard holds anything a later prune would forget. */
  holdsAny(): boolean {
    return (
      this.sql.first("SELECT 1 FROM timeline LIMIT 1") !== undefined ||
      this.sql.first("SELECT 1 FROM timeline_activity LIMIT 1") !== undefined
    );
  }
}

function byMinute(activity: readonly ActivityCount[]): Map<number, Map<string, number>> {
  const minutes = new Map<number, Map<string, number>>();
  for (const { minute, series, count } of activity) {
    const added = minutes.get(minute) ?? new Map<string, number>();
    added.set(series, (added.get(series) ?? 0) + count);
    minutes.set(minute, added);
  }
  return minutes;
}

/** A minute's counts as stored; anything that is not a count is left out. */
function readCounts(json: string): Record<string, number> {
  const counts: Record<string, number> = {};
  try {
    const parsed: unknown = JSON.parse(json);
    if (parsed !== null && typeof parsed === "object") {
      for (const [series, count] of Object.entries(parsed)) if (typeof count === "number") counts[series] = count;
    }
  } catch {
    // A value this code did not write: counted from nothing again.
  }
  return counts;
}

function summaryOf(row: SummaryRow): TimelineSummary {
  return {
    id: row.message_id,
    channel: row.channel,
    conversationId: row.conversation_id,
    status: row.status as MessageStatus,
    acceptedAt: row.accepted_at,
    updatedAt: row.updated_at,
  };
}
