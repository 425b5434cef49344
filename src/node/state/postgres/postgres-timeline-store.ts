import type pg from "pg";
import { fromEventLines, toEventLines } from "../../../core/timeline/event-lines.js";
import { inTimeOrder, type TimelineStore } from "../../../core/timeline/timeline-store.js";
import { summaryOf, TIMELINE_COLUMNS, type TimelineRow } from "../timeline-rows.js";
import { documentsArray, documentsText } from "./group-sql.js";
import { asStateError } from "./postgres-state-error.js";
import { postgresTimelinePage } from "./postgres-timeline-page.js";
import { pruneTimeline } from "./postgres-timeline-prune.js";

const COLUMNS = TIMELINE_COLUMNS;

// One statement a batch. The status moves only with a write that has one and is no older than
// the row's, since replicas write a message's events in any order.
const UPSERT = `INSERT INTO webhook_channel.timeline AS t (${COLUMNS}, events)
SELECT id, channel, conversation, coalesce(status, 'accepted'), accepted, updated, events
FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::bigint[], $6::bigint[], ${documentsArray("$7::text")})
  AS w (id, channel, conversation, status, accepted, updated, events)
ON CONFLICT (message_id) DO UPDATE SET
  events = t.events || excluded.events,
  status = CASE WHEN excluded.updated_at >= t.updated_at
                 AND excluded.status IS DISTINCT FROM 'accepted' OR t.status = 'accepted'
                THEN excluded.status ELSE t.status END,
  updated_at = GREATEST(t.updated_at, excluded.updated_at)`;

const ADD_COUNTS = `INSERT INTO webhook_channel.timeline_activity AS a (minute, series, count)
SELECT * FROM unnest($1::bigint[], $2::text[], $3::bigint[])
ON CONFLICT (minute, series) DO UPDATE SET count = a.count + excluded.count`;

/**
 * The timeline of `postgres_url_env`: the `timeline` and `timeline_activity` tables every
 * replica writes and reads, so any replica answers for a message another one ran. Rows go in
 * id order and counts in key order, so that two replicas' batches never wait on each other in
 * a cycle.
 */
export function createPostgresTimelineStore(pool: pg.Pool): TimelineStore {
  return {
    async write(writes, counts) {
      if (writes.length > 0) {
        const sorted = [...writes].sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
        await pool.query(UPSERT, [
          sorted.map((entry) => entry.id),
          sorted.map((entry) => entry.channel),
          sorted.map((entry) => entry.conversationId),
          // A write without a status must not move the row's: it is sent as "accepted", which
          // moves only a row that is itself still "accepted".
          sorted.map((entry) => entry.status ?? "accepted"),
          sorted.map((entry) => entry.acceptedAt),
          sorted.map((entry) => entry.updatedAt),
          documentsText(sorted.map((entry) => toEventLines(entry.events))),
        ]);
      }
      if (counts.length > 0) {
        const sorted = [...counts].sort((a, b) => a.minute - b.minute || (a.series < b.series ? -1 : 1));
        await pool.query(ADD_COUNTS, [
          sorted.map((count) => count.minute),
          sorted.map((count) => count.series),
          sorted.map((count) => count.count),
        ]);
      }
    },
    // The reads answer the admin API: a database that cannot answer is its 503
    // `state_unavailable`, as the dead letters' reads are, not an unexpected 500.
    async one(id) {
      const { rows } = await pool
        .query<TimelineRow & { readonly events: string }>(
          `SELECT ${COLUMNS}, events FROM webhook_channel.timeline WHERE message_id = $1`,
          [id],
        )
        .catch(unavailable);
      const row = rows[0];
      return row === undefined ? undefined : { ...summaryOf(row), events: inTimeOrder(fromEventLines(row.events)) };
    },
    async page(query) {
      const { rows } = await pool.query<TimelineRow>(postgresTimelinePage(query)).catch(unavailable);
      return rows.map(summaryOf);
    },
    async activity(since) {
      const { rows } = await pool
        .query<{ minute: string; series: string; count: string }>(
          "SELECT minute, series, count FROM webhook_channel.timeline_activity WHERE minute >= $1",
          [since],
        )
        .catch(unavailable);
      return rows.map((row) => ({ minute: Number(row.minute), series: row.series, count: Number(row.count) }));
    },
    async prune(limits) {
      await pruneTimeline(pool, limits);
    },
  };
}

function unavailable(error: unknown): never {
  throw asStateError(error);
}
