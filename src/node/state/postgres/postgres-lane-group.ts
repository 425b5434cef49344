import type pg from "pg";
import type { ConversationTurn } from "../../../core/conversation/conversation-store.js";
import { conversationKey } from "../../../core/conversation/conversation-store.js";
import type { DeadLetter } from "../../../core/dead-letters/dead-letter.js";
import { IDEMPOTENCY_TTL_MS, idempotencyId } from "../../../core/idempotency/idempotency-store.js";
import type { Job } from "../../../core/lifecycle/job.js";
import type { LaneTicket } from "../../../core/lifecycle/lane-store.js";

/** A write under a ticket: it takes effect only while the ticket's epoch is its lane's. */
export interface Fenced<T> {
  readonly ticket: LaneTicket;
  readonly value: T;
}

/** What one group writes; the store fills it from what it took. */
export interface LaneGroup {
  /** This replica: a lane is written only while it names this owner and the ticket's epoch. */
  readonly owner: string;
  /** Jobs to insert, in acceptance order, with whether their row is written (false: deleted in this group). */
  readonly added: readonly { readonly job: Job; readonly stored: boolean }[];
  readonly updated: readonly Fenced<Job>[];
  /** Lane → the highest reply `sequence` its new replies took in this group. */
  readonly numbered: ReadonlyMap<string, number>;
  /** Turns to keep, per lane, in order. */
  readonly turns: readonly Fenced<readonly ConversationTurn[]>[];
  readonly buried: readonly Fenced<DeadLetter>[];
  readonly deleted: readonly Fenced<string>[];
  /** Turns kept per conversation. */
  readonly maxTurns: number;
}

/** Makes a parameter (an array, or one value) of the given SQL type; returns its placeholder. */
type Param = (value: unknown, type: string) => string;

/** One data-modifying statement of a group, or undefined when the group has nothing for it. */
type Part = (param: Param) => string | undefined;

/** `unnest(...)` of one array parameter per column. */
const unnest = (param: Param, columns: readonly (readonly [readonly unknown[], string])[]): string =>
  `unnest(${columns.map(([values, type]) => param(values, type)).join(", ")})`;

/** The fence's test of a row whose lane and epoch are the columns `conversation` and `epoch` of `alias`. */
const fenced = (alias: string): string =>
  `(${alias}.conversation, ${alias}.epoch) IN (SELECT conversation, epoch FROM fence)`;

/**
 * The fence: one update of each lane the group writes under a ticket, only where the lane names
 * this owner and the ticket's epoch, raising its last reply number to what the group numbered.
 * It holds the lane row's lock: a claim (which raises the epoch) waits for this statement, then
 * reads what it wrote; a write after a claim waits for it and then finds the epoch moved. The
 * other parts write only for the lanes the fence returns. `fence_locks` locks the rows first in
 * the database's order, as a claim's insert does: an update locks in the order its plan meets
 * rows, and two statements that took two lanes in opposite orders deadlocked. The owner is tested
 * on the locked row: in the update's filter, stale counts made it a scan of the owner's lanes.
 */
function fenceOf(group: LaneGroup): Part {
  const epochs = new Map<string, Set<number>>();
  const note = (ticket: LaneTicket): void => {
    const known = epochs.get(ticket.key) ?? new Set<number>();
    known.add(ticket.epoch);
    epochs.set(ticket.key, known);
  };
  for (const list of [group.updated, group.turns, group.buried, group.deleted]) {
    for (const { ticket } of list) note(ticket);
  }
  return (param) => {
    if (epochs.size === 0) return undefined;
    const rows = [...epochs].flatMap(([key, set]) => [...set].map((epoch) => [key, epoch] as const));
    const keys = param([...epochs.keys()], "text[]");
    const input = unnest(param, [
      [rows.map(([key]) => key), "text[]"],
      [rows.map(([, epoch]) => epoch), "bigint[]"],
      [rows.map(([key]) => group.numbered.get(key) ?? 0), "bigint[]"],
    ]);
    return `fence_locks AS MATERIALIZED (
  SELECT conversation, owner FROM webhook_channel.lanes WHERE conversation = ANY(${keys}) ORDER BY conversation FOR NO KEY UPDATE),
fence AS (UPDATE webhook_channel.lanes AS l SET last_seq = GREATEST(l.last_seq, f.last)
  FROM fence_locks AS k, ${input} AS f(conversation, epoch, last)
  WHERE k.owner = ${param(group.owner, "text")} AND l.conversation = k.conversation
    AND f.conversation = k.conversation AND l.epoch = f.epoch
  RETURNING l.conversation, l.epoch)`;
  };
}

/** Added jobs in acceptance order (`ORDINALITY`: `seq` is the lane's order); an id stored again keeps its place. */
const addJobs =
  (jobs: readonly Job[], owner: string): Part =>
  (param) => {
    if (jobs.length === 0) return undefined;
    const rows = unnest(param, [
      [jobs.map((job) => job.message.id), "text[]"],
      [jobs.map((job) => job.message.channel), "text[]"],
      [jobs.map((job) => laneOf(job)), "text[]"],
      [jobs.map((job) => JSON.stringify(job)), "text[]"],
    ]);
    // stored_by: a replica that dies before it claims the job's conversation is found by it.
    return `INSERT INTO webhook_channel.jobs (id, channel, conversation, job, stored_by)
  SELECT id, channel, conversation, job, ${param(owner, "text")}
  FROM ${rows} WITH ORDINALITY AS a(id, channel, conversation, job, n) ORDER BY n
  ON CONFLICT (id) DO UPDATE SET job = excluded.job`;
  };

/** Their `Idempotency-Key`s, committed, for 24 h from receipt (the last add of a key wins). */
const addKeys =
  (jobs: readonly Job[]): Part =>
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
    ]);
    return `INSERT INTO webhook_channel.idempotency (channel, key, message_id, conversation_id, committed, expires_at)
  SELECT channel, key, message_id, conversation_id, true, expires_at FROM ${rows} AS k(channel, key, message_id, conversation_id, expires_at)
  ON CONFLICT (channel, key) DO UPDATE SET message_id = excluded.message_id,
    conversation_id = excluded.conversation_id, committed = true, expires_at = excluded.expires_at`;
  };

const updateJobs =
  (jobs: readonly Fenced<Job>[]): Part =>
  (param) => {
    if (jobs.length === 0) return undefined;
    const rows = unnest(param, [
      [jobs.map(({ value }) => value.message.id), "text[]"],
      [jobs.map(({ ticket }) => ticket.key), "text[]"],
      [jobs.map(({ ticket }) => ticket.epoch), "bigint[]"],
      [jobs.map(({ value }) => JSON.stringify(value)), "text[]"],
    ]);
    return `UPDATE webhook_channel.jobs AS j SET job = u.job FROM ${rows} AS u(id, conversation, epoch, job)
  WHERE j.id = u.id AND ${fenced("u")}`;
  };

/** Turns, in order, and the trim that keeps `maxTurns` per conversation (room is kept for the new ones). */
const keepTurns =
  (turns: readonly Fenced<readonly ConversationTurn[]>[], maxTurns: number): Part =>
  (param) => {
    const rows = turns.flatMap(({ ticket, value }) => value.map((turn) => ({ ticket, turn })));
    if (rows.length === 0) return undefined;
    const input = unnest(param, [
      [rows.map(({ ticket }) => ticket.key), "text[]"],
      [rows.map(({ ticket }) => ticket.epoch), "bigint[]"],
      [rows.map(({ turn }) => JSON.stringify(turn)), "text[]"],
      [rows.map(({ turn }) => turn.at), "bigint[]"],
    ]);
    return `appended AS (
  SELECT * FROM ${input} WITH ORDINALITY AS a(conversation, epoch, turn, at, n) WHERE ${fenced("a")}
), inserted AS (
  INSERT INTO webhook_channel.turns (conversation, turn, at) SELECT conversation, turn, at FROM appended ORDER BY n
), counts AS (
  SELECT conversation, count(*) AS appended FROM appended GROUP BY conversation
), trimmed AS (
  DELETE FROM webhook_channel.turns WHERE seq IN (
    SELECT seq FROM (
      SELECT t.seq, c.appended, row_number() OVER (PARTITION BY t.conversation ORDER BY t.seq DESC) AS newest
      FROM webhook_channel.turns AS t JOIN counts AS c ON c.conversation = t.conversation
    ) AS ranked WHERE newest > ${param(maxTurns, "bigint")} - appended))`;
  };

/** Buried jobs' dead letters: a later death of the message replaces its letter. */
const keepLetters =
  (letters: readonly Fenced<DeadLetter>[]): Part =>
  (param) => {
    if (letters.length === 0) return undefined;
    const rows = unnest(param, [
      [letters.map(({ value }) => value.job.message.id), "text[]"],
      [letters.map(({ value }) => value.job.message.channel), "text[]"],
      [letters.map(({ value }) => JSON.stringify(value)), "text[]"],
      [letters.map(({ value }) => value.diedAt), "bigint[]"],
      [letters.map(({ ticket }) => ticket.key), "text[]"],
      [letters.map(({ ticket }) => ticket.epoch), "bigint[]"],
    ]);
    return `INSERT INTO webhook_channel.dead_letters (id, channel, letter, died_at)
  SELECT id, channel, letter, died_at FROM ${rows} AS d(id, channel, letter, died_at, conversation, epoch) WHERE ${fenced("d")}
  ON CONFLICT (id) DO UPDATE SET channel = excluded.channel, letter = excluded.letter, died_at = excluded.died_at`;
  };

const deleteJobs =
  (ids: readonly Fenced<string>[]): Part =>
  (param) => {
    if (ids.length === 0) return undefined;
    const rows = unnest(param, [
      [ids.map(({ value }) => value), "text[]"],
      [ids.map(({ ticket }) => ticket.key), "text[]"],
      [ids.map(({ ticket }) => ticket.epoch), "bigint[]"],
    ]);
    return `DELETE FROM webhook_channel.jobs AS j USING ${rows} AS x(id, conversation, epoch)
  WHERE j.id = x.id AND ${fenced("x")}`;
  };

/** The lanes (and epochs) a group's fence let through: every other fenced write was refused. */
export type Admitted = ReadonlySet<string>;

/** The key of a lane and epoch in {@link Admitted}. */
export function admittedKey(ticket: LaneTicket): string {
  return `${ticket.epoch}:${ticket.key}`;
}

/**
 * Writes everything the lane store gathered in one event-loop turn as one statement, so that a
 * thousand accepted messages cost one round trip and one commit, atomically: the parts the group
 * has, as data-modifying CTEs over arrays (`unnest`), every fenced one behind the fence (see
 * {@link fenceOf}). Only the parts present are sent, and the statement is not prepared: planning
 * a small statement with the arrays at hand costs well under a millisecond, whereas a generic
 * plan cached while `jobs` was nearly empty scanned the whole table once a backlog had built up.
 * The parts touch disjoint rows, which the store guarantees: an id is in at most one of the
 * added, updated and deleted lists (a CTE does not see the rows another one writes). Resolves
 * with the lanes the fence admitted.
 */
export async function writeLaneGroup(pool: pg.Pool, group: LaneGroup): Promise<Admitted> {
  const values: unknown[] = [];
  const param = (value: unknown, type: string): string => {
    values.push(value);
    return `$${values.length}::${type}`;
  };
  const fence = fenceOf(group)(param);
  const parts = [
    addJobs(
      group.added.filter((entry) => entry.stored).map((entry) => entry.job),
      group.owner,
    ),
    // A message accepted and finished within one turn was still accepted: its key stays.
    addKeys(group.added.map((entry) => entry.job)),
    ...(fence === undefined ? [] : [updateJobs(group.updated), keepLetters(group.buried), deleteJobs(group.deleted)]),
  ]
    .map((part) => part(param))
    .filter((sql) => sql !== undefined)
    .map((sql, index) => `w${index} AS (${sql})`);
  const turns = fence === undefined ? undefined : keepTurns(group.turns, group.maxTurns)(param);
  if (turns !== undefined) parts.push(turns);
  if (fence === undefined) {
    if (parts.length === 0) return new Set();
    await pool.query(`WITH ${parts.join(",\n")}\nSELECT 1`, values);
    return new Set();
  }
  const result = await pool.query<{ conversation: string; epoch: string }>(
    `WITH ${[fence, ...parts].join(",\n")}\nSELECT conversation, epoch FROM fence`,
    values,
  );
  return new Set(result.rows.map((row) => admittedKey({ key: row.conversation, epoch: Number(row.epoch) })));
}

function laneOf(job: Job): string {
  return conversationKey(job.message.channel, job.message.message.conversationId);
}
