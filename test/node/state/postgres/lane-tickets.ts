/** Lanes of a Postgres test: a replica's claim of one, and what the database holds of it. */
import pg from "pg";
import { conversationKey } from "../../../../src/core/conversation/conversation-store.js";
import type { DeadLetter } from "../../../../src/core/dead-letters/dead-letter.js";
import type { Job } from "../../../../src/core/lifecycle/job.js";
import type { LaneTicket } from "../../../../src/core/lifecycle/lane-store.js";
import { claimLanes } from "../../../../src/node/replicas/lane-statements.js";
import { notifyChannel } from "../../../../src/node/state/postgres/job-notices.js";
import { createPostgresLaneStore } from "../../../../src/node/state/postgres/postgres-lane-store.js";
import { createLogSink } from "../../../support/log-sink.js";
import { waitFor } from "../../../support/wait-for.js";

/** A new job of conversation `conversationId` on the channel "webhook", as a replica accepts it. */
export function jobIn(conversationId: string, text = "hello"): Job {
  return {
    message: {
      id: crypto.randomUUID(),
      channel: "webhook",
      receivedAt: Date.now(),
      message: { senderId: "u1", conversationId, text },
    },
    delivered: 0,
    attempts: 0,
  };
}

/** The lane of `job`. */
export function laneOf(job: Job): string {
  return conversationKey(job.message.channel, job.message.message.conversationId);
}

/** `replica` claims the lane of `job` (taking it from a replica with no live lease), and gets its ticket. */
export async function claimTicket(pool: pg.Pool, replica: string, job: Job): Promise<LaneTicket> {
  const key = laneOf(job);
  const [answer] = await claimLanes(pool, replica, true, [
    { conversation: key, channel: job.message.channel, jobId: "", reclaim: true },
  ]);
  if (answer === undefined || !answer.mine) throw new Error(`${replica} could not claim ${key}`);
  return { key, epoch: answer.epoch };
}

/**
 * A buried job's letter, written as a replica's job queue writes it when the job dies: through
 * the lane store's `bury`, under a claim of its conversation by `replica`.
 */
export async function buryLetter(pool: pg.Pool, replica: string, letter: DeadLetter): Promise<void> {
  const lanes = createPostgresLaneStore(pool, replica, createLogSink().logger);
  await lanes.bury(await claimTicket(pool, replica, letter.job), letter);
}

/** The stored (pending) job of id `id`, as any replica reads it. */
export async function storedJob(pool: pg.Pool, id: string): Promise<Job | undefined> {
  const rows = await pool.query<{ job: string }>(
    "SELECT job FROM webhook_channel.jobs WHERE id = $1 AND state = 'pending'",
    [id],
  );
  const row = rows.rows[0];
  return row === undefined ? undefined : (JSON.parse(row.job) as Job);
}

/** The lane's last reply number as stored. */
export async function storedLastSequence(pool: pg.Pool, key: string): Promise<number> {
  const rows = await pool.query<{ last_seq: string }>(
    "SELECT last_seq FROM webhook_channel.lanes WHERE conversation = $1",
    [key],
  );
  return Number(rows.rows[0]?.last_seq ?? 0);
}

/** Resolves once one statement of the database of `pool` waits for a lock (`what` names it in a timeout). */
export async function untilOneWaitsForALock(pool: pg.Pool, what: string): Promise<void> {
  await waitFor(
    async () => {
      const waiting = await pool.query<{ count: string }>(
        "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'",
      );
      return Number(waiting.rows[0]?.count) === 1 ? true : undefined;
    },
    5_000,
    what,
  );
}

/** An add of another replica held open before its commit (see {@link holdAnAdd}). */
export interface HeldAdd {
  /** Commits the add and gives its connection back. */
  commit(): Promise<void>;
  /** Gives its connection back (rolling back what is not committed): for a test's `finally`. */
  release(): void;
}

/**
 * What another replica's add does, held open on a connection of `pool`: the lane row of `job`
 * locked and written (a new row version), and `job` stored by `replica`. A statement that needs
 * the row's lock waits until {@link HeldAdd.commit}.
 */
export async function holdAnAdd(pool: pg.Pool, job: Job, replica: string): Promise<HeldAdd> {
  const client = await pool.connect();
  let released = false;
  const release = (): void => {
    if (released) return;
    released = true;
    client.release();
  };
  try {
    await client.query("BEGIN");
    await client.query("SELECT 1 FROM webhook_channel.lanes WHERE conversation = $1 FOR NO KEY UPDATE", [laneOf(job)]);
    await client.query(
      "INSERT INTO webhook_channel.jobs (id, channel, conversation, job, stored_by) VALUES ($1, $2, $3, $4, $5)",
      [job.message.id, job.message.channel, laneOf(job), JSON.stringify(job), replica],
    );
    await client.query("UPDATE webhook_channel.lanes SET last_seq = last_seq WHERE conversation = $1", [laneOf(job)]);
  } catch (error) {
    release();
    throw error;
  }
  return {
    async commit() {
      try {
        await client.query("COMMIT");
      } finally {
        release();
      }
    },
    release,
  };
}

/** A live replica `owner` (its lease runs a minute), and a session listening on its channel. */
export async function liveOwnerListening(
  url: string,
  pool: pg.Pool,
  owner: string,
): Promise<{ listener: pg.Client; heard: string[] }> {
  const listener = new pg.Client({ connectionString: url });
  await listener.connect();
  const heard: string[] = [];
  listener.on("notification", (message) => heard.push(message.payload ?? ""));
  await listener.query(`LISTEN "${notifyChannel(owner)}"`);
  await pool.query("INSERT INTO webhook_channel.replicas (id, lease_until) VALUES ($1, now() + interval '1 minute')", [
    owner,
  ]);
  return { listener, heard };
}
