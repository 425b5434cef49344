import type { Pool } from "pg";

/** A conversation with stored jobs that no live replica runs. */
export interface Orphan {
  readonly conversation: string;
  readonly channel: string;
}

/** What claiming a conversation for one stored job found. */
export interface Claim {
  /** This replica runs the conversation now. */
  readonly mine: boolean;
  /** Who ran it before the claim (null: nobody); when not `mine`, the live owner to tell. */
  readonly previous: string | null;
  /** Ids of the conversation's stored jobs accepted before this one, oldest first. */
  readonly before: readonly string[];
}

/** The channel a replica LISTENs on: Postgres identifiers, so ids are kept to [a-z0-9]. */
export function notifyChannel(replica: string): string {
  return `webhook_channel_${replica}`;
}

/** One conversation to claim: for a stored job (`jobId`), or for a sweep or a notification (""). */
export interface ClaimRequest {
  readonly conversation: string;
  readonly channel: string;
  readonly jobId: string;
}

// A lane row names the replica that runs the conversation. A replica may take one that has no
// row, or (with `takeover`) one whose owner's lease ran out; a row it owns already is left
// untouched, so that the usual claim writes nothing. The statement's snapshot is from before its
// own insert, so `previous` is the owner before it. Rows are locked in conversation order, the
// same order in every replica's statement, so that two claims never deadlock.
const CLAIM = `
WITH input AS (
  SELECT t.n, t.conversation, t.channel, t.job_id
  FROM unnest($1::text[], $2::text[], $3::text[]) WITH ORDINALITY AS t(conversation, channel, job_id, n)
),
claimed AS (
  INSERT INTO webhook_channel.lanes AS l (conversation, channel, owner)
  SELECT DISTINCT ON (conversation) conversation, channel, $4 FROM input ORDER BY conversation
  ON CONFLICT (conversation) DO UPDATE SET owner = EXCLUDED.owner
  WHERE l.owner <> EXCLUDED.owner AND $5 AND NOT EXISTS (
    SELECT 1 FROM webhook_channel.replicas r WHERE r.id = l.owner AND r.lease_until > now())
  RETURNING conversation
)
SELECT (EXISTS (SELECT 1 FROM claimed c WHERE c.conversation = i.conversation) OR l.owner = $4) AS mine,
       l.owner AS previous,
       ARRAY(SELECT j.id FROM webhook_channel.jobs j
             WHERE j.conversation = i.conversation AND j.state = 'pending'
               AND j.seq < coalesce((SELECT seq FROM webhook_channel.jobs WHERE id = i.job_id), 9223372036854775807)
             ORDER BY j.seq) AS before
FROM input i LEFT JOIN webhook_channel.lanes l ON l.conversation = i.conversation
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
  const result = await pool.query<{ mine: boolean; previous: string | null; before: string[] }>(CLAIM, [
    requests.map((request) => request.conversation),
    requests.map((request) => request.channel),
    requests.map((request) => request.jobId),
    replica,
    takeover,
  ]);
  const claims: Claim[] = result.rows;
  if (claims.every((claim) => claim.mine || claim.previous !== null)) return claims;
  // Inserted by another replica after this statement's snapshot: ask who won.
  const owners = await pool.query<{ conversation: string; owner: string }>(
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

/**
 * Gives up the conversations `conversations` that have no stored job left, in one statement;
 * answers, in order, whether each was given up (false: still owned, a job was stored meanwhile).
 */
export async function releaseLanes(pool: Pool, replica: string, conversations: readonly string[]): Promise<boolean[]> {
  const result = await pool.query<{ conversation: string }>(
    `DELETE FROM webhook_channel.lanes l
     WHERE l.conversation IN (
       SELECT conversation FROM webhook_channel.lanes
       WHERE owner = $1 AND conversation = ANY($2) ORDER BY conversation FOR UPDATE)
       AND NOT EXISTS (
         SELECT 1 FROM webhook_channel.jobs j WHERE j.conversation = l.conversation AND j.state = 'pending')
     RETURNING l.conversation`,
    [replica, conversations],
  );
  const released = new Set(result.rows.map((row) => row.conversation));
  return conversations.map((conversation) => released.has(conversation));
}

/**
 * Conversations with stored jobs and no live owner: no lane row (a claim that has not run yet
 * or failed), or, with `takeover`, an owner whose lease ran out.
 */
export async function findOrphans(pool: Pool, takeover: boolean, limit: number): Promise<Orphan[]> {
  const result = await pool.query<Orphan>(
    `SELECT DISTINCT j.conversation, j.channel FROM webhook_channel.jobs j
       LEFT JOIN webhook_channel.lanes l ON l.conversation = j.conversation
     WHERE j.state = 'pending'
       AND (l.owner IS NULL OR ($1 AND NOT EXISTS (
         SELECT 1 FROM webhook_channel.replicas r WHERE r.id = l.owner AND r.lease_until > now())))
     LIMIT $2`,
    [takeover, limit],
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
  await pool.query("DELETE FROM webhook_channel.lanes WHERE owner = $1", [replica]);
  await pool.query("DELETE FROM webhook_channel.replicas WHERE id = $1", [replica]);
}

/** Forgets replicas whose lease ran out an hour ago, and their conversations with no stored job. */
export async function forgetDeadReplicas(pool: Pool): Promise<void> {
  await pool.query(
    `DELETE FROM webhook_channel.lanes l
     WHERE NOT EXISTS (SELECT 1 FROM webhook_channel.replicas r WHERE r.id = l.owner AND r.lease_until > now())
       AND NOT EXISTS (SELECT 1 FROM webhook_channel.jobs j WHERE j.conversation = l.conversation AND j.state = 'pending')`,
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
