import type { Pool } from "pg";
import type { Job } from "../../core/lifecycle/job.js";
import { readDueJob } from "../state/due-job.js";
import { opaque } from "../state/postgres/group-sql.js";
import { namedStatement } from "../state/postgres/named-statements.js";

/** A stored job with its position in the jobs table (acceptance order), and its retry's due time when it waits for one. */
export interface StoredJob {
  readonly seq: number;
  readonly job: Job;
  readonly dueAt: number | undefined;
}

/** What to read of one conversation: the jobs stored after position `after`, `limit` at most. */
export interface LaneSlice {
  readonly conversation: string;
  readonly after: number;
  readonly limit: number;
}

/**
 * The stored jobs of each slice in one statement, each conversation's in acceptance order: what
 * follows what its owner already holds, no more than it has room for, so that the work and the
 * memory of a read never grow with a conversation's backlog.
 */
export async function jobsAfter(pool: Pool, slices: readonly LaneSlice[]): Promise<StoredJob[][]> {
  const result = await pool.query<{ n: string; seq: string; job: string }>(
    namedStatement(
      `SELECT t.n, x.seq, x.job
     FROM unnest(${opaque("$1::text[]")}, ${opaque("$2::bigint[]")}, ${opaque("$3::int[]")})
       WITH ORDINALITY AS t(conversation, after, lim, n)
     CROSS JOIN LATERAL (
       SELECT j.seq, j.job FROM webhook_channel.jobs j
       WHERE j.conversation = t.conversation AND j.state = 'pending' AND j.seq > t.after
       ORDER BY j.seq LIMIT t.lim) x
     ORDER BY t.n, x.seq`,
      [
        slices.map((slice) => slice.conversation),
        slices.map((slice) => slice.after),
        slices.map((slice) => slice.limit),
      ],
    ),
  );
  const read: StoredJob[][] = slices.map(() => []);
  for (const row of result.rows) read[Number(row.n) - 1]?.push({ seq: Number(row.seq), ...readDueJob(row.job) });
  return read;
}

/** The stored jobs among `ids` still waiting, in acceptance order: one job each, in one statement. */
export async function jobsById(pool: Pool, ids: readonly string[]): Promise<StoredJob[][]> {
  const result = await pool.query<{ id: string; seq: string; job: string }>(
    namedStatement(
      `SELECT id, seq, job FROM webhook_channel.jobs
     WHERE id = ANY(${opaque("$1::text[]")}) AND state = 'pending' ORDER BY seq`,
      [ids],
    ),
  );
  const byId = new Map(result.rows.map((row) => [row.id, { seq: Number(row.seq), ...readDueJob(row.job) }]));
  return ids.map((id) => {
    const found = byId.get(id);
    return found === undefined ? [] : [found];
  });
}
