import type { Pool } from "pg";
import { opaque } from "../state/postgres/group-sql.js";
import { type JobNotice, noticePayload, notifyChannel } from "../state/postgres/job-notices.js";
import { namedStatement } from "../state/postgres/named-statements.js";

/** What claiming a conversation for one stored job found. */
export interface Claim {
  /** This replica runs the conversation now. */
  readonly mine: boolean;
  /** The lane's epoch: this replica's writes carry it (see `LaneTicket`). */
  readonly epoch: number;
  /** Who ran it before the claim (null: nobody); when not `mine`, the live owner to tell. */
  readonly previous: string | null;
  /**
   * Whether `previous` holds a live lease. A claim refused for an owner whose lease ran out (this
   * replica may not take over yet, in its first lease) has nobody to tell: the lane is claimed
   * again at a sweep, once it may.
   */
  readonly previousLive: boolean;
  /** The stored job's position in the jobs table (0 for a claim without a job, or a job gone). */
  readonly seq: number;
  /**
   * The position of the conversation's last stored job before this one (0: none): the owner has
   * every job before this one when it has loaded up to here.
   */
  readonly prev: number;
  /** That job's id ("": none): a replica that holds it, or finished it lately, holds all before it. */
  readonly prevId: string;
  /** The conversation's last reply `sequence` (0: none yet). */
  readonly lastSequence: number;
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
// may take one that nobody runs, one whose owner stopped (`gone`), or (with `takeover`) one whose
// owner's lease ran out, and
// (with `reclaim`) its own; every claim raises the epoch. A row it owns already and does not
// reclaim is left unchanged, though locked (ON CONFLICT locks the row it finds either way), so
// that even this claim commits as a write does: a sweep settling refused writes relies on
// that (see `sweep-claims.ts`). The claim waits for a write
// that holds the row (the fence), and returns the last number as that write left it; the jobs
// are read after the claim, by a statement of their own. The final SELECT reads the row as it
// was before the claim, so `previous` is the owner before it. Rows are locked in conversation
// order, the same order in every replica's statement, so that two claims never deadlock.
// A new lane row's first epoch: the database's clock in milliseconds rather than 1, so that a
// conversation forgotten while idle (its row deleted, see `postgres-idle-lanes.ts`) and claimed
// again has epochs above every one of its old row: a run left from before is still fenced out,
// and held claims still compare in order.
const FIRST_EPOCH = "(extract(epoch FROM now()) * 1000)::bigint";

const CLAIM = `
WITH input AS (
  SELECT t.n, t.conversation, t.channel, t.job_id, t.reclaim
  FROM unnest(${opaque("$1::text[]")}, ${opaque("$2::text[]")}, ${opaque("$3::text[]")},
    ${opaque("$4::boolean[]")}) WITH ORDINALITY AS t(conversation, channel, job_id, reclaim, n)
),
claimed AS (
  INSERT INTO webhook_channel.lanes AS l (conversation, channel, owner, epoch)
  SELECT DISTINCT ON (conversation) conversation, channel, $5, ${FIRST_EPOCH} FROM input ORDER BY conversation
  ON CONFLICT (conversation) DO UPDATE SET owner = EXCLUDED.owner, epoch = l.epoch + 1
  WHERE l.owner IS NULL
     OR (l.owner = EXCLUDED.owner AND EXISTS (SELECT 1 FROM input r WHERE r.conversation = l.conversation AND r.reclaim))
     OR (l.owner <> EXCLUDED.owner AND NOT EXISTS (
           SELECT 1 FROM webhook_channel.replicas r WHERE r.id = l.owner AND r.lease_until > now())
         AND ($6 OR EXISTS (SELECT 1 FROM webhook_channel.replicas r WHERE r.id = l.owner AND r.gone)))
  RETURNING conversation, epoch, last_seq
)
SELECT (c.conversation IS NOT NULL OR (l.owner = $5 AND NOT i.reclaim)) AS mine,
       coalesce(c.epoch, l.epoch, 0) AS epoch,
       coalesce(c.last_seq, l.last_seq, 0) AS last_sequence,
       l.owner AS previous,
       EXISTS (SELECT 1 FROM webhook_channel.replicas r WHERE r.id = l.owner AND r.lease_until > now()) AS previous_live,
       coalesce(s.seq, 0) AS seq,
       coalesce(p.seq, 0) AS prev,
       coalesce(p.id, '') AS prev_id
FROM input i
  LEFT JOIN webhook_channel.jobs s ON s.id = i.job_id
  LEFT JOIN LATERAL (
    SELECT j.seq, j.id FROM webhook_channel.jobs j
    WHERE j.conversation = i.conversation AND j.state = 'pending' AND j.seq < coalesce(s.seq, 9223372036854775807)
    ORDER BY j.seq DESC LIMIT 1) p ON true
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
    previous_live: boolean;
    seq: string;
    prev: string;
    prev_id: string;
    last_sequence: string;
  }>(
    namedStatement(CLAIM, [
      requests.map((request) => request.conversation),
      requests.map((request) => request.channel),
      requests.map((request) => request.jobId),
      requests.map((request) => request.reclaim),
      replica,
      takeover,
    ]),
  );
  const claims: Claim[] = result.rows.map((row) => ({
    mine: row.mine,
    epoch: Number(row.epoch),
    previous: row.previous,
    previousLive: row.previous_live,
    seq: Number(row.seq),
    prev: Number(row.prev),
    prevId: row.prev_id,
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
      : // It won this instant: live.
        { ...claim, previous: ownerOf.get(requests[index]?.conversation ?? "") ?? null, previousLive: true },
  );
}

/** Tells each live owner that its conversation has a new stored job, in one statement. */
export async function notifyOwners(
  pool: Pool,
  notices: readonly (JobNotice & { readonly owner: string })[],
): Promise<void> {
  await pool.query("SELECT pg_notify(c, p) FROM unnest($1::text[], $2::text[]) AS t(c, p)", [
    notices.map((notice) => notifyChannel(notice.owner)),
    notices.map(noticePayload),
  ]);
}

/** What giving up a conversation did: `released`, `kept` (a job was stored meanwhile), or `gone` (not this replica's any more). */
export type Release = "released" | "kept" | "gone";

/**
 * The CTEs that give up (owner NULL) each lane row `locking` locks and that has no stored job
 * left; `locking` selects `conversation` and `xmin::text AS version`, and locks with `FOR
 * UPDATE` in conversation order, as claims lock, so that the two never deadlock. A row written
 * after the statement's snapshot (it waited for the row's lock) is left as it is: an add that
 * held the lock wrote it, and its job, which the snapshot lacks, may have been told to the owner
 * (see `positionsQuery`). The rows stay, stamped with the time they were let go: they keep each
 * conversation's epoch and last reply number until it has been idle long enough to be
 * forgotten. `locked` holds the locked rows, `released` the conversations given up.
 */
export function releaseUnmoved(locking: string): string {
  return `locked AS MATERIALIZED (${locking}),
seen AS (SELECT conversation, xmin::text AS version FROM webhook_channel.lanes
  WHERE conversation IN (SELECT conversation FROM locked)),
released AS (UPDATE webhook_channel.lanes l SET owner = NULL, used_at = now() FROM locked JOIN seen USING (conversation)
  WHERE l.conversation = locked.conversation AND locked.version = seen.version
    AND NOT EXISTS (SELECT 1 FROM webhook_channel.jobs j WHERE j.conversation = l.conversation AND j.state = 'pending')
  RETURNING l.conversation)`;
}

/**
 * Gives up the conversations `conversations` that have no stored job left, in one statement,
 * answering each in order (see {@link Release} and {@link releaseUnmoved}).
 */
export async function releaseLanes(pool: Pool, replica: string, conversations: readonly string[]): Promise<Release[]> {
  const result = await pool.query<{ conversation: string; released: boolean }>(
    `WITH ${releaseUnmoved(`SELECT conversation, xmin::text AS version FROM webhook_channel.lanes
       WHERE owner = $1 AND conversation = ANY($2) ORDER BY conversation FOR UPDATE`)}
     SELECT k.conversation, EXISTS (SELECT 1 FROM released r WHERE r.conversation = k.conversation) AS released
     FROM locked k`,
    [replica, conversations],
  );
  const answers = new Map(result.rows.map((row) => [row.conversation, row.released ? "released" : "kept"] as const));
  return conversations.map((conversation) => answers.get(conversation) ?? "gone");
}

/**
 * Gives up `replica`'s conversations and its lease (a graceful stop): those with no stored job are
 * released (see {@link releaseUnmoved}), those with stored jobs stay named after it, and its
 * lease ends now with the mark `gone`, so that the other replicas take them at their next sweep,
 * without waiting for the lease to run out (nor, for one just started, for a whole lease of its own).
 */
export async function leaveReplicas(pool: Pool, replica: string): Promise<void> {
  await pool.query(
    `WITH ${releaseUnmoved(`SELECT l.conversation, l.xmin::text AS version FROM webhook_channel.lanes l
       WHERE l.owner = $1
         AND NOT EXISTS (SELECT 1 FROM webhook_channel.jobs j WHERE j.conversation = l.conversation AND j.state = 'pending')
       ORDER BY l.conversation FOR UPDATE`)}
     SELECT count(*) FROM released`,
    [replica],
  );
  await pool.query(
    "UPDATE webhook_channel.replicas SET lease_until = now() - interval '1 millisecond', swept = false, gone = true WHERE id = $1",
    [replica],
  );
}
