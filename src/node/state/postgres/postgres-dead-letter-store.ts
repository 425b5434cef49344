import type pg from "pg";
import type { StoredDeadLetter } from "../../../core/admin/dead-letter-item.js";
import { conversationKey } from "../../../core/conversation/conversation-store.js";
import { type DeadLetter, replayableJob } from "../../../core/dead-letters/dead-letter.js";
import type {
  DeadLetterPageQuery,
  DeadLetterStore,
  ReplayFilter,
} from "../../../core/dead-letters/dead-letter-store.js";
import { MAX_TRIMMED_PER_KEEP } from "../../../core/dead-letters/keep-dead-letter.js";
import { subjectOf } from "../../../core/timeline/timeline-recorder.js";
import { inTransaction } from "./postgres-pool.js";
import { asStateError } from "./postgres-state-error.js";

interface Row {
  readonly id: string;
  readonly channel: string;
  readonly letter: string;
}

const TRIM = `DELETE FROM webhook_channel.dead_letters WHERE id IN (
  SELECT id FROM webhook_channel.dead_letters WHERE channel = $1 ORDER BY died_at DESC, id DESC
  OFFSET $2 LIMIT ${MAX_TRIMMED_PER_KEEP})`;

/**
 * The four shapes of a page (with or without a channel, with or without a cursor): each a
 * plain row comparison, so that the (channel, died_at, id) and (died_at, id) indexes serve it.
 */
function pageStatement(query: DeadLetterPageQuery): { text: string; values: unknown[] } {
  const where: string[] = [];
  const values: unknown[] = [];
  if (query.channel !== null) {
    values.push(query.channel);
    where.push(`channel = $${values.length}`);
  }
  if (query.after !== null) {
    values.push(query.after.diedAt, query.after.id);
    where.push(`(died_at, id) > ($${values.length - 1}::bigint, $${values.length}::text)`);
  }
  values.push(query.limit + 1);
  const filter = where.length === 0 ? "" : `WHERE ${where.join(" AND ")}`;
  return {
    text: `SELECT id, channel, letter FROM webhook_channel.dead_letters ${filter} ORDER BY died_at, id LIMIT $${values.length}`,
    values,
  };
}

/**
 * The dead letters of `postgres_url_env`: the `dead_letters` table every replica lists and
 * replays. The job store writes each letter as its job dies (in the statement that deletes the
 * job); `keep` then only bounds the channel: writing the letter again would bring it back if a
 * replay took it in between (another replica, the CLI). A replay moves the letter back to
 * `jobs` in state `replay`, in one transaction, where any replica's `takeReplayed` picks it up
 * (so it survives the death of the replica that replayed it). The dropped total counts since
 * this process started.
 */
export function createPostgresDeadLetterStore(pool: pg.Pool): DeadLetterStore {
  let droppedTotal = 0;
  const guarded =
    <Args extends unknown[], Result>(work: (...args: Args) => Promise<Result>) =>
    async (...args: Args): Promise<Result> => {
      try {
        return await work(...args);
      } catch (error) {
        throw asStateError(error);
      }
    };
  return {
    keep: guarded(async (letter: DeadLetter, max: number) => {
      const dropped = (await pool.query(TRIM, [letter.job.message.channel, max])).rowCount ?? 0;
      if (dropped === 0) return { dropped: 0, droppedTotal: 0 };
      droppedTotal += dropped;
      return { dropped, droppedTotal };
    }),
    page: guarded(async (query: DeadLetterPageQuery) => {
      const rows = (await pool.query<Row>(pageStatement(query))).rows;
      return { letters: rows.slice(0, query.limit).map(stored), more: rows.length > query.limit };
    }),
    one: guarded(async (id: string) => {
      const row = (
        await pool.query<Row>("SELECT id, channel, letter FROM webhook_channel.dead_letters WHERE id = $1", [id])
      ).rows[0];
      return row === undefined ? undefined : stored(row);
    }),
    remove: guarded(async (id: string) => {
      const result = await pool.query("DELETE FROM webhook_channel.dead_letters WHERE id = $1", [id]);
      return (result.rowCount ?? 0) > 0;
    }),
    replay: guarded(async (filter: ReplayFilter) =>
      inTransaction(pool, async (client) => {
        // The delete takes the letters: a replica replaying the same letter at once finds none.
        const taken = await client.query<Row & { died_at: string }>(
          `DELETE FROM webhook_channel.dead_letters
           WHERE ($1::text IS NULL OR channel = $1) AND ($2::text[] IS NULL OR id = ANY($2))
             AND ($3::text[] IS NULL OR channel = ANY($3))
           RETURNING id, channel, letter, died_at`,
          [
            filter.channel ?? null,
            filter.ids === undefined ? null : [...filter.ids],
            filter.channels === undefined ? null : [...filter.channels],
          ],
        );
        if (taken.rows.length === 0) return [];
        // The list's order (died_at, then id bytewise), which becomes the order in the lanes.
        const letters = taken.rows
          .map((row) => ({ id: row.id, diedAt: BigInt(row.died_at), letter: JSON.parse(row.letter) as DeadLetter }))
          .sort((a, b) =>
            a.diedAt === b.diedAt ? Buffer.compare(Buffer.from(a.id), Buffer.from(b.id)) : a.diedAt < b.diedAt ? -1 : 1,
          );
        const jobs = letters.map(({ letter }) => replayableJob(letter));
        const ids = jobs.map((job) => job.message.id);
        // A job left under the id (none should be) gives way, as SQLite's INSERT OR REPLACE does:
        // the replay joins the end of its lane.
        await client.query("DELETE FROM webhook_channel.jobs WHERE id = ANY($1::text[])", [ids]);
        await client.query(
          `INSERT INTO webhook_channel.jobs (id, channel, conversation, job, state)
           SELECT id, channel, conversation, job, 'replay'
           FROM unnest($1::text[], $2::text[], $3::text[], $4::text[]) WITH ORDINALITY AS r(id, channel, conversation, job, n)
           ORDER BY n`,
          [
            ids,
            jobs.map((job) => job.message.channel),
            jobs.map((job) => conversationKey(job.message.channel, job.message.message.conversationId)),
            jobs.map((job) => JSON.stringify(job)),
          ],
        );
        // What this delete took, and only that: a letter another replica took or deleted first is not here.
        return letters.map(({ letter }) => subjectOf(letter.job.message));
      }),
    ),
    count: guarded(async () => {
      const result = await pool.query<{ n: number }>("SELECT count(*)::int AS n FROM webhook_channel.dead_letters");
      return result.rows[0]?.n ?? 0;
    }),
  };
}

/** Dead letters stored now, per channel (every replica's), for `/readyz` and `/metrics`. */
export async function countDeadLetters(pool: pg.Pool): Promise<Map<string, number>> {
  const result = await pool.query<{ channel: string; n: number }>(
    "SELECT channel, count(*)::int AS n FROM webhook_channel.dead_letters GROUP BY channel",
  );
  return new Map(result.rows.map(({ channel, n }) => [channel, n]));
}

function stored(row: Row): StoredDeadLetter {
  return { id: row.id, channel: row.channel, letter: JSON.parse(row.letter) as DeadLetter };
}
