import type pg from "pg";
import { conversationKey } from "../../../core/conversation/conversation-store.js";
import type { Job } from "../../../core/lifecycle/job.js";
import { inTransaction } from "./postgres-pool.js";
import { asStateError } from "./postgres-state-error.js";

/**
 * Dead letters replayed (`dead-letters replay`, the admin API of any replica) and not yet taken,
 * oldest first, marked as taken by `replica`: at most `room(channel)` of each channel; the rest
 * stay for a later call. Replicas taking at once each get different jobs (`SKIP LOCKED`). A taker
 * that dies before it claims their conversations leaves them to the sweep, as a stored message.
 */
export async function takeReplayedJobs(
  pool: pg.Pool,
  replica: string,
  room: (channel: string, wanted?: number) => number,
): Promise<Job[]> {
  try {
    // Most polls find nothing: one indexed read, no transaction.
    const waiting = await pool.query<{ waiting: boolean }>(
      "SELECT EXISTS (SELECT 1 FROM webhook_channel.jobs WHERE state = 'replay') AS waiting",
    );
    if (waiting.rows[0]?.waiting !== true) return [];
    return await inTransaction(pool, async (client) => {
      // SKIP LOCKED: what another replica is taking now is its own, not a reason to wait.
      const rows = await client.query<{ id: string; channel: string }>(
        "SELECT id, channel FROM webhook_channel.jobs WHERE state = 'replay' ORDER BY seq FOR UPDATE SKIP LOCKED",
      );
      const waiting = new Map<string, number>();
      for (const row of rows.rows) waiting.set(row.channel, (waiting.get(row.channel) ?? 0) + 1);
      const left = new Map<string, number>();
      const ids: string[] = [];
      for (const row of rows.rows) {
        const free = left.get(row.channel) ?? room(row.channel, waiting.get(row.channel) ?? 0);
        left.set(row.channel, Math.max(0, free - 1));
        if (free >= 1) ids.push(row.id);
      }
      if (ids.length === 0) return [];
      const taken = await client.query<{ job: string }>(
        `WITH taken AS (
           UPDATE webhook_channel.jobs SET state = 'pending', stored_by = $2 WHERE id = ANY($1::text[]) RETURNING seq, job)
         SELECT job FROM taken ORDER BY seq`,
        [ids, replica],
      );
      return taken.rows.map((row) => JSON.parse(row.job) as Job);
    });
  } catch (error) {
    throw asStateError(error);
  }
}

/** Stores `job` (a dead letter's) again as replayed, for the next {@link takeReplayedJobs} of any replica. */
export async function restoreJob(pool: pg.Pool, job: Job): Promise<void> {
  try {
    await pool.query(
      `INSERT INTO webhook_channel.jobs (id, channel, conversation, job, state)
       VALUES ($1, $2, $3, $4, 'replay')
       ON CONFLICT (id) DO UPDATE SET job = excluded.job, state = 'replay'`,
      [
        job.message.id,
        job.message.channel,
        conversationKey(job.message.channel, job.message.message.conversationId),
        JSON.stringify(job),
      ],
    );
  } catch (error) {
    throw asStateError(error);
  }
}
