import type { Pool } from "pg";
import type { Job } from "../../core/lifecycle/job.js";

/** A conversation with stored jobs that no live replica runs. */
export interface Orphan {
  readonly conversation: string;
  readonly channel: string;
}

/** What claiming a conversation for one stored job found. */
export interface Claim {
  /** This replica runs the conversation now. */
  readonly mine: boolean;
  /** The lane's epoch: this replica's writes carry it (see `LaneTicket`). */
  readonly epoch: number;
  /** Who ran it before the claim (null: nobody); when not `mine`, the live owner to tell. */
  readonly previous: string | null;
  /** Ids of the conversation's stored jobs accepted before this one, oldest first. */
  readonly before: readonly string[];
  /** The conversation's last reply `sequence` (0: none yet). */
  readonly lastSequence: number;
}

/** The channel a replica LISTENs on: Postgres identifiers, so ids are kept to [a-z0-9]. */
export function notifyChannel(replica: string): string {
  return `webhook_channel_${replica}`;
}

/**
 * One conversation to claim: for a stored job (`jobId`), or for a sweep or a notification ("").
 * `reclaim`: this replica holds no ticket of it, so a lane row that names it already (from before
 * a lapse of its lease) is claimed again, raising the epoch, which fences its own older runs.
 */
export interface ClaimRequest {
  readonly conversation: string;
  readonly channel: string;
  readonly jobId: string;
  readonly reclaim: boolean;
}

// A lane row names the replica that runs the conversation and the epoch of its claim. A replica
// may take one that nobody runs, or (with `takeover`) one whose owner's lease ran out, and
// (with `reclaim`) its own; every claim raises the epoch. A row it owns already and does not
// reclaim is left untouched, so that the usual claim writes nothing. The claim waits for a write
// that holds the row (the fence), and returns the last number as that write left it; the jobs
// are read after the claim, by a statement of their own. The final SELECT reads the row as it
// was before the claim, so `previous` is the owner before it. Rows are locked in conversation
// order, the same order in every replica's statement, so that two claims never deadlock.
const CLAIM = `
WITH input AS (
  SELECT t.n, t.conversation, t.channel, t.job_id, t.reclaim
  FROM unnest($1::text[], $2::text[], $3::text[], $4::boolean[]) WITH ORDINALITY AS t(conversation, channel, job_id, reclaim, n)
),
claimed AS (
  INSERT INTO webhook_channel.lanes AS l (conversation, channel, owner, epoch)
  SELECT DISTINCT ON (conversation) conversation, channel, $5, 1 FROM input ORDER BY conversation
  ON CONFLICT (conversation) DO UPDATE SET owner = EXCLUDED.owner, epoch = l.epoch + 1
  WHERE l.owner IS NULL
     OR (l.owner = EXCLUDED.owner AND EXISTS (SELECT 1 FROM input r WHERE r.conversation = l.conversation AND r.reclaim))
     OR (l.owner <> EXCLUDED.owner AND $6 AND NOT EXISTS (
           SELECT 1 FROM webhook_channel.replicas r WHERE r.id = l.owner AND r.lease_until > now()))
  RETURNING conversation, epoch, last_seq
)
SELECT (c.conversation IS NOT NULL OR (l.owner = $5 AND NOT i.reclaim)) AS mine,
       coalesce(c.epoch, l.epoch, 0) AS epoch,
       coalesce(c.last_seq, l.last_seq, 0) AS last_sequence,
       l.owner AS previous,
       ARRAY(SELECT j.id FROM webhook_channel.jobs j
             WHERE j.conversation = i.conversation AND j.state = 'pending'
               AND j.seq < coalesce((SELECT seq FROM webhook_channel.jobs WHERE id = i.job_id), 9223372036854775807)
             ORDER BY j.seq) AS before
FROM input i
  LEFT JOIN claimed c ON c.conversation = i.conversation
  LEFT JOIN webhook_channel.lanes l ON l.conversation = i.conversation
ORDER BY i.n`;

/**
 * Claims the conversations of `requests` in one statement, answering each in order (see
 * {@link Claim}). `takeover` allows taking a conversation whose owner's lease ran out.
 */
export async function claimLanes(
  pool: Pool,
  replica: string,
  takeover: boolean,
  requests: readonly ClaimRequest[],
): Promise<Claim[]> {
  const result = await pool.query<{
    mine: boolean;
    epoch: string;
    previous: string | null;
    before: string[];
    last_sequence: string;
  }>(CLAIM, [
    requests.map((request) => request.conversation),
    requests.map((request) => request.channel),
    requests.map((request) => request.jobId),
    requests.map((request) => request.reclaim),
    replica,
    takeover,
  ]);
  const claims: Claim[] = result.rows.map((row) => ({
    mine: row.mine,
    epoch: Number(row.epoch),
    previous: row.previous,
    before: row.before,
    lastSequence: Number(row.last_sequence),
  }));
  if (claims.every((claim) => claim.mine || claim.previous !== null)) return claims;
  // Inserted by another replica after this statement's snapshot: ask who won.
  const owners = await pool.query<{ conversation: string; owner: string | null }>(
    "SELECT conversation, owner FROM webhook_channel.lanes WHERE conversation = ANY($1)",
    [requests.map((request) => request.conversation)],
  );
  const ownerOf = new Map(owners.rows.map((row) => [row.conversation, row.owner]));
  return claims.map((claim, index) =>
    claim.mine || claim.previous !== null
      ? claim
      : { ...claim, previous: ownerOf.get(requests[index]?.conversation ?? "") ?? null },
  );
}

/** Tells each live owner that its conversation has a new stored job, in one statement. */
export async function notifyOwners(
  pool: Pool,
  notices: readonly { readonly owner: string; readonly conversation: string }[],
): Promise<void> {
  await pool.query("SELECT pg_notify(c, p) FROM unnest($1::text[], $2::text[]) AS t(c, p)", [
    notices.map((notice) => notifyChannel(notice.owner)),
    notices.map((notice) => notice.conversation),
  ]);
}

/** What giving up a conversation did: `released`, `kept` (a job was stored meanwhile), or `gone` (not this replica's any more). */
export type Release = "released" | "kept" | "gone";

/**
 * Gives up the conversations `conversations` that have no stored job left, in one statement,
 * answering each in order (see {@link Release}).
 */
export async function releaseLanes(pool: Pool, replica: string, conversations: readonly string[]): Promise<Release[]> {
  const result = await pool.query<{ conversation: string; released: boolean }>(
    `WITH mine AS (
       SELECT conversation FROM webhook_channel.lanes
       WHERE owner = $1 AND conversation = ANY($2) ORDER BY conversation FOR UPDATE
     ), gone AS (
       UPDATE webhook_channel.lanes l SET owner = NULL FROM mine
       WHERE l.conversation = mine.conversation
         AND NOT EXISTS (
           SELECT 1 FROM webhook_channel.jobs j WHERE j.conversation = l.conversation AND j.state = 'pending')
       RETURNING l.conversation
     )
     SELECT m.conversation, EXISTS (SELECT 1 FROM gone g WHERE g.conversation = m.conversation) AS released
     FROM mine m`,
    [replica, conversations],
  );
  const answers = new Map(result.rows.map((row) => [row.conversation, row.released ? "released" : "kept"] as const));
  return conversations.map((conversation) => answers.get(conversation) ?? "gone");
}

/** The stored jobs of `conversations`, each conversation's in acceptance order, in one statement. */
export async function jobsOfLanes(pool: Pool, conversations: readonly string[]): Promise<Job[][]> {
  const result = await pool.query<{ conversation: string; job: string }>(
    `SELECT conversation, job FROM webhook_channel.jobs
     WHERE conversation = ANY($1) AND state = 'pending' ORDER BY seq`,
    [conversations],
  );
  const byLane = new Map<string, Job[]>(conversations.map((conversation) => [conversation, []]));
  for (const row of result.rows) byLane.get(row.conversation)?.push(JSON.parse(row.job) as Job);
  return conversations.map((conversation) => byLane.get(conversation) ?? []);
}

/**
 * Conversations with stored jobs and no live owner: no lane row (a claim that has not run yet
 * or failed), or, with `takeover`, an owner whose lease ran out.
 */
export async function findOrphans(
  pool: Pool,
  takeover: boolean,
  channels: readonly string[],
  limit: number,
): Promise<Orphan[]> {
  // Only the channels this replica has: during a rolling change of channels, a replica without
  // one must not hold its conversations.
  const result = await pool.query<Orphan>(
    `SELECT DISTINCT j.conversation, j.channel FROM webhook_channel.jobs j
       LEFT JOIN webhook_channel.lanes l ON l.conversation = j.conversation
     WHERE j.state = 'pending' AND j.channel = ANY($3)
       AND (l.owner IS NULL OR ($1 AND NOT EXISTS (
         SELECT 1 FROM webhook_channel.replicas r WHERE r.id = l.owner AND r.lease_until > now())))
     LIMIT $2`,
    [takeover, limit, channels],
  );
  return result.rows;
}

/** The stored jobs of the conversations `replica` runs: to find those it was not told of. */
export async function jobsOfOwner(
  pool: Pool,
  replica: string,
): Promise<readonly { conversation: string; channel: string; id: string }[]> {
  const result = await pool.query<{ conversation: string; channel: string; id: string }>(
    `SELECT j.conversation, j.channel, j.id FROM webhook_channel.jobs j
       JOIN webhook_channel.lanes l ON l.conversation = j.conversation
     WHERE l.owner = $1 AND j.state = 'pending'`,
    [replica],
  );
  return result.rows;
}

/** Gives up every conversation of `replica` and its lease (a graceful stop): others take them at once. */
export async function leaveReplicas(pool: Pool, replica: string): Promise<void> {
  // In conversation order, as claims lock them, so that the two never deadlock. The rows stay:
  // they keep each conversation's epoch and last reply number.
  await pool.query(
    `UPDATE webhook_channel.lanes SET owner = NULL WHERE conversation IN (
       SELECT conversation FROM webhook_channel.lanes WHERE owner = $1 ORDER BY conversation FOR UPDATE)`,
    [replica],
  );
  await pool.query("DELETE FROM webhook_channel.replicas WHERE id = $1", [replica]);
}

/** Forgets replicas whose lease ran out an hour ago, and lets go of their conversations with no stored job. */
export async function forgetDeadReplicas(pool: Pool): Promise<void> {
  await pool.query(
    `UPDATE webhook_channel.lanes SET owner = NULL WHERE conversation IN (
       SELECT l.conversation FROM webhook_channel.lanes l
       WHERE l.owner IS NOT NULL
         AND NOT EXISTS (SELECT 1 FROM webhook_channel.replicas r WHERE r.id = l.owner AND r.lease_until > now())
         AND NOT EXISTS (SELECT 1 FROM webhook_channel.jobs j WHERE j.conversation = l.conversation AND j.state = 'pending')
       ORDER BY l.conversation FOR UPDATE SKIP LOCKED)`,
  );
  await pool.query("DELETE FROM webhook_channel.replicas WHERE lease_until < now() - interval '1 hour'");
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
  const counts = await pool.query<{ channel: string; n: string }>(
    "SELECT channel, count(*) AS n FROM webhook_channel.jobs GROUP BY channel",
  );
  return new Map(counts.rows.map((row) => [row.channel, Number(row.n)]));
}

/** The ids of the replicas whose lease runs, in order: what each one's share of a brain's limit follows. */
export async function liveReplicas(pool: Pool): Promise<string[]> {
  const result = await pool.query<{ id: string }>(
    "SELECT id FROM webhook_channel.replicas WHERE lease_until > now() ORDER BY id",
  );
  return result.rows.map((row) => row.id);
}
