import type { Pool } from "pg";
import { withSequentialScans } from "../state/postgres/postgres-pool.js";
import { releaseUnmoved } from "./lane-statements.js";
import type { LiveReplica } from "./replica-brains.js";

/** A conversation with stored jobs that no live replica runs. */
export interface Orphan {
  readonly conversation: string;
  readonly channel: string;
}

/**
 * Replicas whose lease ran out and whose conversations and stored jobs were not all taken yet;
 * with `goneOnly`, only those that stopped and said so (see `leaveReplicas`).
 */
export async function lapsedReplicas(pool: Pool, goneOnly: boolean): Promise<string[]> {
  const result = await pool.query<{ id: string }>(
    "SELECT id FROM webhook_channel.replicas WHERE lease_until <= now() AND NOT swept AND (gone OR NOT $1) ORDER BY id",
    [goneOnly],
  );
  return result.rows.map((row) => row.id);
}

/**
 * What the lapsed replicas `lapsed` left, on this replica's `channels`: the conversations they ran
 * that have stored jobs, and the conversations of the jobs they stored that no live replica runs
 * (they died between storing a job and claiming its conversation). Both are read through the
 * indexes on the owner and on the storing replica: the work follows what they left, not the
 * backlog of all replicas.
 */
export async function orphansOf(
  pool: Pool,
  lapsed: readonly string[],
  channels: readonly string[],
  limit: number,
): Promise<Orphan[]> {
  const result = await pool.query<Orphan>(
    `(SELECT l.conversation, l.channel FROM webhook_channel.lanes l
      WHERE l.owner = ANY($1) AND l.channel = ANY($2)
        AND EXISTS (SELECT 1 FROM webhook_channel.jobs j WHERE j.conversation = l.conversation AND j.state = 'pending')
      LIMIT $3)
     UNION
     (SELECT DISTINCT j.conversation, j.channel FROM webhook_channel.jobs j
        LEFT JOIN webhook_channel.lanes l ON l.conversation = j.conversation
      WHERE j.stored_by = ANY($1) AND j.state = 'pending' AND j.channel = ANY($2)
        AND (l.owner IS NULL OR NOT EXISTS (
          SELECT 1 FROM webhook_channel.replicas r WHERE r.id = l.owner AND r.lease_until > now()))
      LIMIT $3)`,
    [lapsed, channels, limit],
  );
  return result.rows;
}

/**
 * Marks the replicas `ids` (still lapsed) swept, so that later sweeps skip them, when nothing of
 * theirs is left to take on any channel (the sweeping replica may serve only some): no lane they
 * run with stored jobs, and no job they stored that nobody runs.
 */
export async function markSwept(pool: Pool, ids: readonly string[]): Promise<void> {
  await pool.query(
    `UPDATE webhook_channel.replicas r SET swept = true
     WHERE r.id = ANY($1) AND r.lease_until <= now()
       AND NOT EXISTS (SELECT 1 FROM webhook_channel.lanes l WHERE l.owner = r.id
             AND EXISTS (SELECT 1 FROM webhook_channel.jobs j WHERE j.conversation = l.conversation AND j.state = 'pending'))
       AND NOT EXISTS (SELECT 1 FROM webhook_channel.jobs j
             LEFT JOIN webhook_channel.lanes l ON l.conversation = j.conversation
             WHERE j.stored_by = r.id AND j.state = 'pending' AND l.owner IS NULL)`,
    [ids],
  );
}

/** A conversation a replica runs, and the position of its last stored job (0: none). */
export interface OwnLane extends Orphan {
  readonly last: number;
}

/**
 * The conversations the lanes table says `replica` runs, each with the position of its last
 * stored job: what it must hold, to compare with what it does (a notification lost with a
 * connection, a lease that ran out). Read through the index on the owner.
 */
export async function ownLanes(pool: Pool, replica: string): Promise<OwnLane[]> {
  const result = await pool.query<{ conversation: string; channel: string; last: string | null }>(
    `SELECT l.conversation, l.channel,
            (SELECT max(j.seq) FROM webhook_channel.jobs j WHERE j.conversation = l.conversation AND j.state = 'pending') AS last
     FROM webhook_channel.lanes l WHERE l.owner = $1`,
    [replica],
  );
  return result.rows.map((row) => ({
    conversation: row.conversation,
    channel: row.channel,
    last: Number(row.last ?? 0),
  }));
}

/**
 * The stored jobs at or below each lane's position (`upTo`): all of them the replica should hold,
 * or have finished lately. One it does not is a job whose commit became visible after a later
 * one's and whose notification was lost. Read through the index on a job's conversation.
 */
export async function jobsUpTo(
  pool: Pool,
  lanes: readonly { readonly conversation: string; readonly upTo: number }[],
): Promise<{ conversation: string; id: string }[]> {
  const result = await pool.query<{ conversation: string; id: string }>(
    `SELECT j.conversation, j.id FROM unnest($1::text[], $2::bigint[]) AS t(conversation, up_to)
       JOIN webhook_channel.jobs j ON j.conversation = t.conversation AND j.seq <= t.up_to AND j.state = 'pending'`,
    [lanes.map((lane) => lane.conversation), lanes.map((lane) => lane.upTo)],
  );
  return result.rows;
}

/**
 * Conversations with stored jobs, on `channels`, that nobody owns: looked for once, when a
 * replica starts, in case a path left one that the owner and storer indexes do not find. A job
 * a live replica stored is left to it: it may be between storing and claiming its lane.
 */
export async function strayLanes(pool: Pool, channels: readonly string[], limit: number): Promise<Orphan[]> {
  const result = await pool.query<Orphan>(
    `SELECT DISTINCT j.conversation, j.channel FROM webhook_channel.jobs j
       LEFT JOIN webhook_channel.lanes l ON l.conversation = j.conversation
     WHERE j.state = 'pending' AND j.channel = ANY($2) AND l.owner IS NULL
       AND NOT EXISTS (SELECT 1 FROM webhook_channel.replicas r
                       WHERE r.id = j.stored_by AND r.lease_until > now() AND NOT r.gone)
     LIMIT $1`,
    [limit, channels],
  );
  return result.rows;
}

/**
 * Lets go of the conversations with no stored job that replicas whose lease ran out still name,
 * and forgets such replicas an hour after their lease once they name none, and the write checks
 * of replicas that have written none for an hour (a live replica writes its own at each probe).
 */
export async function forgetDeadReplicas(pool: Pool): Promise<void> {
  await pool.query(
    `WITH ${releaseUnmoved(`SELECT l.conversation, l.xmin::text AS version FROM webhook_channel.lanes l
       WHERE l.owner IS NOT NULL
         AND l.owner IN (SELECT id FROM webhook_channel.replicas WHERE lease_until <= now())
         AND NOT EXISTS (SELECT 1 FROM webhook_channel.jobs j WHERE j.conversation = l.conversation AND j.state = 'pending')
       ORDER BY l.conversation FOR UPDATE SKIP LOCKED`)}
     SELECT count(*) FROM released`,
  );
  await pool.query(
    `DELETE FROM webhook_channel.replicas r WHERE r.lease_until < now() - interval '1 hour'
       AND NOT EXISTS (SELECT 1 FROM webhook_channel.lanes l WHERE l.owner = r.id)
       AND NOT EXISTS (SELECT 1 FROM webhook_channel.jobs j WHERE j.stored_by = r.id AND j.state = 'pending')`,
  );
  await pool.query("DELETE FROM webhook_channel.write_checks WHERE checked_at < now() - interval '1 hour'");
}

/**
 * The stored unfinished jobs per channel when `replica` is the live replica with the lowest id
 * (the one that reports what all replicas share), undefined when it is not.
 */
export async function sharedBacklogIfReporter(
  pool: Pool,
  replica: string,
): Promise<ReadonlyMap<string, number> | undefined> {
  const reporter = await pool.query<{ id: string | null }>(
    "SELECT min(id) AS id FROM webhook_channel.replicas WHERE lease_until > now()",
  );
  if (reporter.rows[0]?.id !== replica) return undefined;
  const counts = await withSequentialScans(pool, (client) =>
    client.query<{ channel: string; n: string }>(
      "SELECT channel, count(*) AS n FROM webhook_channel.jobs GROUP BY channel",
    ),
  );
  return new Map(counts.rows.map((row) => [row.channel, Number(row.n)]));
}

/** The ids of the replicas whose lease runs, in order: what each one's share of a brain's limit follows. */
export async function liveReplicas(pool: Pool): Promise<LiveReplica[]> {
  const result = await pool.query<{ id: string; brain_calls: Record<string, number> | null }>(
    "SELECT id, brain_calls FROM webhook_channel.replicas WHERE lease_until > now() ORDER BY id",
  );
  return result.rows.map((row) => ({ id: row.id, calls: row.brain_calls ?? {} }));
}
