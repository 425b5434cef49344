import { LruMap } from "../../../core/lru-map.js";
import { noticeSql } from "./job-notices.js";

/**
 * Where a group's statement put an accepted job, and who ran its conversation when it was
 * stored: read under the lock of the conversation's lane row, which the statement holds until
 * its commit, so a claim by another replica either came before (and shows here) or waits for
 * the commit and then reads the job. A replica that holds the lane under that epoch needs no
 * claim of its own to place the job (see `lane-arrivals.ts`).
 */
export interface AddedPosition {
  /** The lane row's owner as locked, until the commit; null when there is none, or no row yet. */
  readonly owner: string | null;
  /** The lane row's epoch as locked (0: no row yet). */
  readonly epoch: number;
  /** The job's position in the jobs table. */
  readonly seq: number;
  /**
   * The position of the conversation's pending job before it (0: none), as far as the
   * statement's snapshot shows: see {@link exact}.
   */
  readonly prev: number;
  /** That job's id ("": none). */
  readonly prevId: string;
  /**
   * No other statement wrote the lane row between the statement's snapshot and its lock, so
   * {@link prev} is the job before this one. False when one did (it may have stored a job of the
   * lane that the snapshot lacks, see {@link positionsQuery}): the owner then reads the lane on
   * from what it holds, which finds both in order.
   */
  readonly exact: boolean;
  /**
   * The statement told `owner`, another replica whose lease is live, where the job is (a
   * notification sent at its commit): the job runs there, and its placing here claims nothing.
   */
  readonly told: boolean;
}

/** A row of a group's statement: a lane the fence admitted (`id` null) or an added job's position. */
export interface GroupRow {
  readonly conversation: string;
  /** The admitted epoch; for a position, the lane row's (null: no row yet). */
  readonly epoch: string | null;
  readonly id: string | null;
  readonly owner: string | null;
  readonly seq: string | null;
  readonly prev: string | null;
  readonly prev_id: string | null;
  readonly exact: boolean | null;
  readonly told: boolean | null;
}

/**
 * The added jobs in the lane's order, each with the one before it in the same insert: a CTE of a
 * group with added jobs (see {@link positionsQuery}).
 */
export const ORDERED_ADDED = `ordered AS (
  SELECT id, conversation, seq,
    lag(seq) OVER (PARTITION BY conversation ORDER BY seq) AS group_prev,
    lag(id) OVER (PARTITION BY conversation ORDER BY seq) AS group_prev_id
  FROM added)`;

/**
 * How full Postgres's notification queue (one for the whole cluster) may be for a statement that
 * stores messages to send notifications. A session that listens and stops reading (its process
 * stopped, not ended) holds the queue's tail, and once the queue is full a commit that notifies
 * fails: a store must never fail for that. Past the bound the storing replica claims the
 * conversation instead, and the claim finds the live owner and sends it the notice in a statement
 * of its own; should that fail, the storing replica's next sweep claims and tells again. Postgres
 * warns from the same share.
 */
export const NOTIFY_QUEUE_BOUND = 0.5;

/**
 * One row per job the group's `added` insert returned, with its lane row from `lane_locks`. The
 * pending job before it is the one before it in the same insert, else the last one the
 * statement's snapshot holds below it. A job of the conversation that another statement added
 * and committed after that snapshot (this one may have waited for its lock) is not in it, but
 * that statement wrote the lane row (`fenceOf`): a row whose version is not the snapshot's
 * answers `exact` false. Where the row names another replica (`self` is this one's id as SQL)
 * whose lease is live, the statement tells it, as a claim and a notice after the commit would:
 * the notification leaves at the commit, and the lock held until then keeps that replica the
 * owner (its release waits, and then finds the row moved, see `releaseLanes`). The owner reads
 * on from what it holds, so the position before the job does not matter there.
 */
export function positionsQuery(self: string): string {
  const elsewhere = `k.owner <> ${self} AND EXISTS (
    SELECT 1 FROM webhook_channel.replicas r WHERE r.id = k.owner AND r.lease_until > now())
    AND pg_notification_queue_usage() < ${NOTIFY_QUEUE_BOUND}`;
  return `SELECT o.conversation, k.epoch, o.id, k.owner, o.seq,
  coalesce(o.group_prev, p.seq, 0) AS prev, coalesce(o.group_prev_id, p.id, '') AS prev_id,
  k.version = s.version AS exact,
  CASE WHEN ${elsewhere} THEN ${noticeSql("k.owner", "o.seq", "o.id", "o.conversation")} IS NOT NULL ELSE false END AS told
FROM ordered o
  LEFT JOIN lane_locks k ON k.conversation = o.conversation
  LEFT JOIN lane_seen s ON s.conversation = o.conversation
  LEFT JOIN LATERAL (
    SELECT j.seq, j.id FROM webhook_channel.jobs j
    WHERE o.group_prev IS NULL AND j.conversation = o.conversation AND j.state = 'pending' AND j.seq < o.seq
    ORDER BY j.seq DESC LIMIT 1) p ON true`;
}

/** The fence's rows in the shape of {@link positionsQuery}'s, to be read in one result. */
export const FENCE_QUERY = `SELECT conversation, epoch, NULL::text AS id, NULL::text AS owner, NULL::bigint AS seq,
  NULL::bigint AS prev, NULL::text AS prev_id, NULL::boolean AS exact, NULL::boolean AS told FROM fence`;

/** The position of an added job's row of the group's result, or undefined for a fence's row. */
export function positionOf(row: GroupRow): AddedPosition | undefined {
  if (row.id === null) return undefined;
  return {
    owner: row.owner,
    epoch: Number(row.epoch ?? 0),
    seq: Number(row.seq ?? 0),
    prev: Number(row.prev ?? 0),
    prevId: row.prev_id ?? "",
    exact: row.exact === true,
    told: row.told === true,
  };
}

/** How many positions are kept for their jobs' placing; one placed later is claimed instead. */
const MAX_KEPT = 100_000;

/**
 * The positions of committed adds, kept until each job's placing takes its own. A job whose
 * add answered too late for its client is never placed: the bound forgets its position.
 */
export class AddedPositions {
  readonly #kept = new LruMap<AddedPosition>();

  /** Keeps what a group's statement returned. */
  keep(positions: ReadonlyMap<string, AddedPosition>): void {
    for (const [id, position] of positions) this.#kept.set(id, position);
    this.#kept.trimTo(MAX_KEPT);
  }

  /** The position of job `id`'s add, once: undefined when not kept (or taken already). */
  take(id: string): AddedPosition | undefined {
    const position = this.#kept.get(id);
    if (position !== undefined) this.#kept.delete(id);
    return position;
  }
}
