/** The parts of a lane group's statement that write under a ticket, behind its fence. */
import type { ConversationTurn } from "../../../core/conversation/conversation-store.js";
import type { DeadLetter } from "../../../core/dead-letters/dead-letter.js";
import type { Job } from "../../../core/lifecycle/job.js";
import type { LaneTicket } from "../../../core/lifecycle/lane-store.js";
import { DOCUMENTS, fenced, type Part, unnest } from "./group-sql.js";

/** A write under a ticket: it takes effect only while the ticket's epoch is its lane's. */
export interface Fenced<T> {
  readonly ticket: LaneTicket;
  readonly value: T;
}

/** Jobs' progress (their replies, attempts), behind the fence. */
export const updateJobs =
  (jobs: readonly Fenced<Job>[]): Part =>
  (param) => {
    if (jobs.length === 0) return undefined;
    const rows = unnest(param, [
      [jobs.map(({ value }) => value.message.id), "text[]"],
      [jobs.map(({ ticket }) => ticket.key), "text[]"],
      [jobs.map(({ ticket }) => ticket.epoch), "bigint[]"],
      [jobs.map(({ value }) => JSON.stringify(value)), DOCUMENTS],
    ]);
    return `UPDATE webhook_channel.jobs AS j SET job = u.job FROM ${rows} AS u(id, conversation, epoch, job)
  WHERE j.id = u.id AND ${fenced("u")}`;
  };

/** Turns, in order, and the trim that keeps `maxTurns` per conversation (room is kept for the new ones). */
export const keepTurns =
  (turns: readonly Fenced<readonly ConversationTurn[]>[], maxTurns: number): Part =>
  (param) => {
    const all = turns.flatMap(({ ticket, value }) => value.map((turn) => ({ ticket, turn })));
    // Only a conversation's newest `maxTurns` of the group are inserted: the trim below cannot see
    // the rows this statement inserts, so a group of more would stay stored beyond the bound.
    const left = new Map<string, number>();
    const rows: typeof all = [];
    for (let index = all.length - 1; index >= 0; index -= 1) {
      const row = all[index];
      if (row === undefined) continue;
      const lane = row.ticket.key;
      const room = left.get(lane) ?? maxTurns;
      if (room <= 0) continue;
      left.set(lane, room - 1);
      rows.push(row);
    }
    rows.reverse();
    if (rows.length === 0) return undefined;
    const input = unnest(param, [
      [rows.map(({ ticket }) => ticket.key), "text[]"],
      [rows.map(({ ticket }) => ticket.epoch), "bigint[]"],
      [rows.map(({ turn }) => JSON.stringify(turn)), DOCUMENTS],
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

/** Buried jobs' dead letters: a later death of the message replaces its letter, an earlier one changes nothing. */
export const keepLetters =
  (letters: readonly Fenced<DeadLetter>[]): Part =>
  (param) => {
    if (letters.length === 0) return undefined;
    const rows = unnest(param, [
      [letters.map(({ value }) => value.job.message.id), "text[]"],
      [letters.map(({ value }) => value.job.message.channel), "text[]"],
      [letters.map(({ value }) => JSON.stringify(value)), DOCUMENTS],
      [letters.map(({ value }) => value.diedAt), "bigint[]"],
      [letters.map(({ ticket }) => ticket.key), "text[]"],
      [letters.map(({ ticket }) => ticket.epoch), "bigint[]"],
    ]);
    return `INSERT INTO webhook_channel.dead_letters AS kept (id, channel, letter, died_at)
  SELECT id, channel, letter, died_at FROM ${rows} AS d(id, channel, letter, died_at, conversation, epoch) WHERE ${fenced("d")}
  ON CONFLICT (id) DO UPDATE SET channel = excluded.channel, letter = excluded.letter, died_at = excluded.died_at
  WHERE excluded.died_at > kept.died_at`;
  };

/** Finished jobs, behind the fence. */
export const deleteJobs =
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
