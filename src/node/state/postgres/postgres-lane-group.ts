import type pg from "pg";
import type { ConversationTurn } from "../../../core/conversation/conversation-store.js";
import { conversationKey } from "../../../core/conversation/conversation-store.js";
import type { DeadLetter } from "../../../core/dead-letters/dead-letter.js";
import { IDEMPOTENCY_TTL_MS, idempotencyId } from "../../../core/idempotency/idempotency-store.js";
import type { Job } from "../../../core/lifecycle/job.js";
import type { LaneTicket } from "../../../core/lifecycle/lane-store.js";
import {
  type AddedPosition,
  FENCE_QUERY,
  type GroupRow,
  ORDERED_ADDED,
  positionOf,
  positionsQuery,
} from "./added-positions.js";
import { deleteJobs, type Fenced, keepLetters, keepTurns, updateJobs } from "./fenced-parts.js";
import { DOCUMENTS, opaque, type Part, unnest } from "./group-sql.js";
import { namedStatement } from "./named-statements.js";
import { storedFingerprint } from "./postgres-idempotency-store.js";

/** What one group writes; the store fills it from what it took. */
export interface LaneGroup {
  /** This replica: a lane is written only while it names this owner and the ticket's epoch. */
  readonly owner: string;
  /** Jobs to insert, in acceptance order, with whether their row is written (false: deleted in this group). */
  readonly added: readonly { readonly job: Job; readonly stored: boolean }[];
  readonly updated: readonly Fenced<Job>[];
  /** Lane → the highest reply `sequence` its new replies took in this group, under its newest claim's epoch. */
  readonly numbered: ReadonlyMap<string, Numbered>;
  /** Turns to keep, per lane, in order. */
  readonly turns: readonly Fenced<readonly ConversationTurn[]>[];
  readonly buried: readonly Fenced<DeadLetter>[];
  readonly deleted: readonly Fenced<string>[];
  /** Turns kept per conversation. */
  readonly maxTurns: number;
  /** Epoch ms of the write: an `Idempotency-Key` expired before it may be taken by another message. */
  readonly now: number;
}

/**
 * The highest reply number a lane's saves of a group took under one claim. Only the newest
 * claim's saves can pass the fence: a number of an older claim's run (refused) raised the lane
 * past the replies stored, and its next reply left a gap in `sequence`.
 */
export interface Numbered {
  readonly epoch: number;
  readonly last: number;
}

/** The lanes a group writes under tickets, with the epochs of its tickets for each. */
function ticketsOf(group: LaneGroup): Map<string, Set<number>> {
  const epochs = new Map<string, Set<number>>();
  for (const list of [group.updated, group.turns, group.buried, group.deleted]) {
    for (const { ticket } of list) {
      const known = epochs.get(ticket.key) ?? new Set<number>();
      known.add(ticket.epoch);
      epochs.set(ticket.key, known);
    }
  }
  return epochs;
}

/**
 * The lock of every lane row the group writes under a ticket or adds a job to, taken in the
 * database's order, as a claim's insert takes it: an update locks in the order its plan meets
 * rows, and two statements that took two lanes in opposite orders deadlocked. Held until the
 * commit, so a claim (which raises the epoch) waits for this statement, then reads what it
 * wrote, and the owner and epoch read here are the lane's until then. `version` tells whether a
 * statement that committed after this one's snapshot wrote the row (see `positionsQuery`).
 */
const laneLocks =
  (keys: ReadonlySet<string>): Part =>
  (param) => {
    if (keys.size === 0) return undefined;
    const lanes = opaque(param([...keys], "text[]"));
    return `lane_locks AS MATERIALIZED (
  SELECT conversation, owner, epoch, xmin::text AS version FROM webhook_channel.lanes WHERE conversation = ANY(${lanes})
  ORDER BY conversation FOR NO KEY UPDATE),
lane_seen AS (SELECT conversation, xmin::text AS version FROM webhook_channel.lanes WHERE conversation = ANY(${lanes}))`;
  };

/**
 * One update of every locked lane row. For a lane the group writes under a ticket it is the
 * fence: where the lane names this owner and the ticket's epoch, it raises the lane's last reply
 * number to what the group numbered, and `fence` returns the lane; a write after a claim finds
 * the epoch moved, and the other fenced parts write only for the lanes `fence` returns. Every
 * other row is written unchanged, a new version all the same: a statement adding a job of the
 * lane at the same time then sees that the row moved since its snapshot, which holds no job this
 * one adds. The owner is tested on the locked row: in the update's filter, stale counts made it a
 * scan of the owner's lanes.
 */
const fenceOf =
  (group: LaneGroup, epochs: ReadonlyMap<string, ReadonlySet<number>>): Part =>
  (param) => {
    const rows = [...epochs].flatMap(([key, set]) => [...set].map((epoch) => [key, epoch] as const));
    const input = unnest(param, [
      [rows.map(([key]) => key), "text[]"],
      [rows.map(([, epoch]) => epoch), "bigint[]"],
      [rows.map(([key, epoch]) => numberUnder(group.numbered.get(key), epoch)), "bigint[]"],
    ]);
    return `lane_writes AS (UPDATE webhook_channel.lanes AS l SET last_seq = GREATEST(l.last_seq, coalesce(f.last, 0))
  FROM lane_locks AS k LEFT JOIN ${input} AS f(conversation, epoch, last)
    ON f.conversation = k.conversation AND f.epoch = k.epoch AND k.owner = ${param(group.owner, "text")}
  WHERE l.conversation = k.conversation
  RETURNING l.conversation, l.epoch, f.conversation IS NOT NULL AS admitted),
fence AS (SELECT conversation, epoch FROM lane_writes WHERE admitted)`;
  };

/**
 * Added jobs in acceptance order (`ORDINALITY`: `seq` is the lane's order); an id stored again
 * keeps its place. A job with an `Idempotency-Key` is stored only when {@link addKeys} took the
 * key for it (`keys`, which comes first): one whose key another message holds is left out.
 */
const addJobs =
  (jobs: readonly Job[], owner: string, keyed: boolean): Part =>
  (param) => {
    if (jobs.length === 0) return undefined;
    const rows = unnest(param, [
      [jobs.map((job) => job.message.id), "text[]"],
      [jobs.map((job) => job.message.channel), "text[]"],
      [jobs.map((job) => laneOf(job)), "text[]"],
      [jobs.map((job) => JSON.stringify(job)), DOCUMENTS],
      [jobs.map((job) => job.message.idempotencyKey !== undefined), "boolean[]"],
    ]);
    const held = keyed ? "WHERE NOT a.keyed OR a.id IN (SELECT message_id FROM keys)\n  " : "";
    // stored_by: a replica that dies before it claims the job's conversation is found by it.
    return `added AS (INSERT INTO webhook_channel.jobs (id, channel, conversation, job, stored_by)
  SELECT id, channel, conversation, job, ${param(owner, "text")}
  FROM ${rows} WITH ORDINALITY AS a(id, channel, conversation, job, keyed, n)
  ${held}ORDER BY n
  ON CONFLICT (id) DO UPDATE SET job = excluded.job
  RETURNING id, conversation, seq)`;
  };

/**
 * Their `Idempotency-Key`s, committed, for 24 h from receipt (the last add of a key wins), each
 * taken only where it is free, expired, or held for the same message: a statement that commits
 * late (its request was already refused, its reservation released, and a retry took the key for
 * another message) must not take the key over, nor store its message beside the retry's. The
 * upsert waits for a concurrent claim of the key and judges the row it left; `keys` returns the
 * messages whose key was taken.
 */
const addKeys =
  (jobs: readonly Job[], now: number): Part =>
  (param) => {
    // One row per key: a multi-row upsert may not touch a row twice.
    const keyed = new Map<string, { message: Job["message"]; key: string }>();
    for (const { message } of jobs) {
      const key = message.idempotencyKey;
      if (key !== undefined) keyed.set(idempotencyId(message.channel, key), { message, key });
    }
    const keys = [...keyed.values()];
    if (keys.length === 0) return undefined;
    const rows = unnest(param, [
      [keys.map(({ message }) => message.channel), "text[]"],
      [keys.map(({ key }) => key), "text[]"],
      [keys.map(({ message }) => message.id), "text[]"],
      [keys.map(({ message }) => message.message.conversationId), "text[]"],
      [keys.map(({ message }) => message.receivedAt + IDEMPOTENCY_TTL_MS), "bigint[]"],
      [keys.map(({ message }) => storedFingerprint(message.id, message.idempotencyFingerprint)), "text[]"],
    ]);
    return `keys AS (INSERT INTO webhook_channel.idempotency AS i (channel, key, message_id, conversation_id, committed, expires_at, fingerprint)
  SELECT channel, key, message_id, conversation_id, true, expires_at, fingerprint
  FROM ${rows} AS k(channel, key, message_id, conversation_id, expires_at, fingerprint)
  ON CONFLICT (channel, key) DO UPDATE SET message_id = excluded.message_id,
    conversation_id = excluded.conversation_id, committed = true, expires_at = excluded.expires_at,
    fingerprint = coalesce(excluded.fingerprint, i.fingerprint)
  WHERE i.message_id = excluded.message_id OR i.expires_at <= ${param(now, "bigint")}
  RETURNING i.message_id)`;
  };

/** The lanes (and epochs) a group's fence let through: every other fenced write was refused. */
export type Admitted = ReadonlySet<string>;

/** The key of a lane and epoch in {@link Admitted}. */
export function admittedKey(ticket: LaneTicket): string {
  return `${ticket.epoch}:${ticket.key}`;
}

/** What a group's statement answers: the lanes its fence admitted, and where its added jobs went. */
export interface GroupResult {
  readonly admitted: Admitted;
  /** By job id; see {@link AddedPosition}. */
  readonly positions: ReadonlyMap<string, AddedPosition>;
}

/**
 * Writes everything the lane store gathered in one event-loop turn as one statement, so that a
 * thousand accepted messages cost one round trip and one commit, atomically: the parts the group
 * has, as data-modifying CTEs over arrays (`unnest`), every fenced one behind the fence (see
 * {@link fenceOf}), behind the lanes' locks ({@link laneLocks}). Only the parts present are
 * sent: the statement is one of a few shapes, each a named statement ({@link namedStatement}),
 * planned once per session rather than at every call. The parts touch disjoint rows, which the
 * store guarantees: an id is in at most one of the added, updated and deleted lists (a CTE does
 * not see the rows another one writes).
 */
export async function writeLaneGroup(pool: pg.Pool, group: LaneGroup): Promise<GroupResult> {
  const values: unknown[] = [];
  const param = (value: unknown, type: string): string => {
    values.push(value);
    return `$${values.length}::${type}`;
  };
  const stored = group.added.filter((entry) => entry.stored).map((entry) => entry.job);
  const epochs = ticketsOf(group);
  const locks = laneLocks(new Set([...epochs.keys(), ...stored.map(laneOf)]))(param);
  const fence = locks === undefined ? undefined : fenceOf(group, epochs)(param);
  const fenced = epochs.size > 0;
  // A message accepted and finished within one turn was still accepted: its key stays.
  const keys = addKeys(
    group.added.map((entry) => entry.job),
    group.now,
  )(param);
  const added = addJobs(stored, group.owner, keys !== undefined)(param);
  const parts = [...(fenced ? [updateJobs(group.updated), keepLetters(group.buried), deleteJobs(group.deleted)] : [])]
    .map((part) => part(param))
    .filter((sql) => sql !== undefined)
    .map((sql, index) => `w${index} AS (${sql})`);
  const turns = fenced ? keepTurns(group.turns, group.maxTurns)(param) : undefined;
  const ctes = [locks, fence, keys, added, ...parts, turns, added === undefined ? undefined : ORDERED_ADDED];
  const queries = [
    fenced ? FENCE_QUERY : undefined,
    added === undefined ? undefined : positionsQuery(param(group.owner, "text")),
  ];
  const present = (sql: string | undefined): sql is string => sql !== undefined;
  const withs = ctes.filter(present);
  if (withs.length === 0) return { admitted: new Set(), positions: new Map() };
  const final = queries.filter(present);
  const result = await pool.query<GroupRow>(
    namedStatement(
      `WITH ${withs.join(",\n")}\n${final.length === 0 ? "SELECT 1 WHERE false" : final.join("\nUNION ALL\n")}`,
      values,
    ),
  );
  const admitted = new Set<string>();
  const positions = new Map<string, AddedPosition>();
  for (const row of result.rows) {
    const position = positionOf(row);
    if (position === undefined) admitted.add(admittedKey({ key: row.conversation, epoch: Number(row.epoch ?? 0) }));
    else if (row.id !== null) positions.set(row.id, position);
  }
  return { admitted, positions };
}

/** What `numbered` raises the lane to under `epoch`: nothing for another claim's numbers. */
function numberUnder(numbered: Numbered | undefined, epoch: number): number {
  return numbered?.epoch === epoch ? numbered.last : 0;
}

function laneOf(job: Job): string {
  return conversationKey(job.message.channel, job.message.message.conversationId);
}
