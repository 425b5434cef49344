import type { DeadLetter } from "../../core/dead-letters/dead-letter.js";
import { IDEMPOTENCY_TTL_MS } from "../../core/idempotency/idempotency-store.js";
import type { Job } from "../../core/lifecycle/job.js";
import type { PendingJobStore } from "../../core/lifecycle/pending-job-store.js";
import type { Logger } from "../../core/log/logger.js";
import { createGroupCommit, type GroupBatch, type GroupCommit, type GroupPart } from "./sqlite-group-commit.js";
import { createRowBatch } from "./sqlite-row-batch.js";
import { createSequenceRecord } from "./sqlite-sequence-counter.js";
import type { StateDb } from "./sqlite-state.js";

/** The durable store of pending jobs, with what it recovered at startup. */
export interface SqlitePendingJobStore extends PendingJobStore {
  /** Every unfinished job, oldest first; replayed dead letters are left to {@link takeReplayed}. */
  takePending(): Job[];
  /**
   * Dead letters replayed (`dead-letters replay`, the admin API) and not yet taken, oldest
   * first, marked as taken: at most `room(channel)` of each channel (default: all). The rest
   * stay stored for a later call.
   */
  takeReplayed(room?: (channel: string) => number): Job[];
}

interface Waiter {
  readonly resolve: () => void;
  readonly reject: (error: unknown) => void;
}

/**
 * Keeps jobs, idempotency keys and dead letters in SQLite, writing through the connection's
 * {@link GroupCommit}: what one event-loop turn asks for shares one transaction.
 *
 * - `add` (an accepted message, with its `Idempotency-Key`, so that a key is never remembered
 *   for a message that was lost) resolves once that transaction committed: the 200 waits for
 *   a commit without paying one per request.
 * - `update` resolves the same way, so a run posts its replies only once they are stored. A
 *   job's replies bring their conversation's highest sequence number into the same
 *   transaction (see `createSqliteSequenceCounter`).
 * - `remove` of a finished job may wait: it rides on the next group, or commits on its own
 *   after at most a second. Should the process die first, the job is delivered again with
 *   the same webhook-id, which receivers deduplicate.
 *
 * `bury` commits at once, in its own transaction: the admin API's dead-letter store finds the
 * letter there right after (dead letters are the exception, not the path to make fast).
 */
export function createSqlitePendingJobStore(
  db: StateDb,
  logger: Logger,
  group: GroupCommit = createGroupCommit(db, logger),
): SqlitePendingJobStore {
  // Each write of a group is one statement for all of its jobs (up to 64 rows; see
  // createRowBatch), the rows in acceptance order, so that `seq` keeps it. An upsert, like the
  // other stores: one duplicate id must not fail the group it was committed with.
  const insertJobs = createRowBatch(
    db,
    2,
    (values) => `INSERT INTO jobs (id, job) VALUES ${values} ON CONFLICT (id) DO UPDATE SET job = excluded.job`,
  );
  const insertKeys = createRowBatch(
    db,
    5,
    (values) =>
      `INSERT OR REPLACE INTO idempotency (channel, key, message_id, conversation_id, expires_at) VALUES ${values}`,
  );
  const updateJobs = createRowBatch(
    db,
    2,
    (values) =>
      `WITH progress (id, job) AS (VALUES ${values}) UPDATE jobs SET job = progress.job FROM progress WHERE jobs.id = progress.id`,
  );
  // The finished jobs of a group in one statement.
  const deleteJobs = db.prepare("DELETE FROM jobs WHERE id IN (SELECT value FROM json_each(?))");
  const selectJob = db.prepare("SELECT job FROM jobs WHERE id = ? AND state = 'pending'");
  const deleteJob = db.prepare("DELETE FROM jobs WHERE id = ?");
  const insertDead = db.prepare(
    "INSERT OR REPLACE INTO dead_letters (id, channel, letter, died_at) VALUES (?, ?, ?, ?)",
  );
  const selectPending = db.prepare("SELECT job FROM jobs WHERE state = 'pending' ORDER BY seq");
  const anyReplay = db.prepare("SELECT 1 FROM jobs WHERE state = 'replay' LIMIT 1");
  // The channel without parsing each job: the poll looks at waiting replays every second.
  const selectReplay = db.prepare(
    "SELECT id, json_extract(job, '$.message.channel') AS channel FROM jobs WHERE state = 'replay' ORDER BY seq",
  );
  const takeReplay = db.prepare("UPDATE jobs SET state = 'pending' WHERE id = ? AND state = 'replay' RETURNING job");
  const takeReplays = db.transaction((room: (channel: string) => number): Job[] => {
    const left = new Map<string, number>();
    const taken: Job[] = [];
    for (const row of selectReplay.all() as { id: string; channel: string }[]) {
      const free = left.get(row.channel) ?? room(row.channel);
      if (free < 1) {
        left.set(row.channel, 0);
        continue;
      }
      left.set(row.channel, free - 1);
      const job = takeReplay.get(row.id) as { job: string } | undefined;
      if (job !== undefined) taken.push(JSON.parse(job.job) as Job);
    }
    return taken;
  });
  const buryJob = db.transaction((letter: DeadLetter) => {
    insertDead.run(letter.job.message.id, letter.job.message.channel, JSON.stringify(letter), letter.diedAt);
    deleteJob.run(letter.job.message.id);
  });
  const sequences = createSequenceRecord(db);

  // What the group now forming will write. An id is in at most one of `added` and `updated`:
  // an update of a job whose add has not committed replaces the add's copy.
  let added = new Map<string, { job: Job; waiters: Waiter[] }>();
  let updated = new Map<string, { job: Job; waiters: Waiter[] }>();
  let finished = new Set<string>();

  const take = (): GroupBatch | undefined => {
    if (added.size === 0 && updated.size === 0 && finished.size === 0) return undefined;
    const adds = added;
    const updates = updated;
    const removes = finished;
    added = new Map();
    updated = new Map();
    finished = new Set();
    const noted = new Map<string, number>();
    for (const { job } of adds.values()) sequences.note(job, noted);
    for (const { job } of updates.values()) sequences.note(job, noted);
    return {
      write() {
        const jobs: [string, string][] = [];
        const keys: [string, string, string, string, number][] = [];
        for (const { job } of adds.values()) {
          const { message } = job;
          jobs.push([message.id, JSON.stringify(job)]);
          if (message.idempotencyKey !== undefined) {
            const expiresAt = message.receivedAt + IDEMPOTENCY_TTL_MS;
            keys.push([message.channel, message.idempotencyKey, message.id, message.message.conversationId, expiresAt]);
          }
        }
        if (jobs.length > 0) insertJobs(jobs);
        if (keys.length > 0) insertKeys(keys);
        // A job finished since is deleted in this transaction: its progress need not be written.
        const progress: [string, string][] = [];
        for (const [id, { job }] of updates) if (!removes.has(id)) progress.push([id, JSON.stringify(job)]);
        if (progress.length > 0) updateJobs(progress);
        sequences.write(noted);
        if (removes.size > 0) deleteJobs.run(JSON.stringify([...removes]));
      },
      settled(error) {
        if (error === undefined) sequences.committed(noted);
        else if (adds.size > 0) {
          logger.error("cannot commit accepted messages to state_dir", { count: adds.size, error: String(error) });
        }
        if (error !== undefined && removes.size > 0) {
          // The jobs stay stored and are delivered again after a restart, with the same ids.
          logger.error("cannot remove finished messages from state_dir", { count: removes.size, error: String(error) });
        }
        for (const entries of [adds, updates]) {
          for (const { waiters } of entries.values()) {
            for (const waiter of waiters) {
              if (error === undefined) waiter.resolve();
              else waiter.reject(error);
            }
          }
        }
      },
    };
  };
  const part: GroupPart = { take };

  /** The job's write in the group now forming, resolved once that group committed. */
  const pending = (into: Map<string, { job: Job; waiters: Waiter[] }>, job: Job, waiters: Waiter[]): Promise<void> =>
    new Promise<void>((resolve, reject) => {
      waiters.push({ resolve, reject });
      into.set(job.message.id, { job, waiters });
      group.soon(part);
    });

  const takeReplayed = (room: (channel: string) => number = () => Number.POSITIVE_INFINITY): Job[] => {
    // Most polls find nothing: they take no write lock then.
    if (anyReplay.get() === undefined) return [];
    // IMMEDIATE: the write lock first, so that a commit of another connection (the delivery
    // thread, the CLI) between the read and the update cannot fail the poll; a replay
    // committed after the read is taken by the next poll.
    return takeReplays.immediate(room);
  };

  return {
    add(job) {
      const id = job.message.id;
      // A job stored again (the contract allows it) is no longer finished.
      finished.delete(id);
      const earlier = added.get(id) ?? updated.get(id);
      updated.delete(id);
      return pending(added, job, earlier?.waiters ?? []);
    },
    update(job) {
      const id = job.message.id;
      const stillAdding = added.get(id);
      // Not yet committed: the add's row takes the progress, and its waiters wait as before.
      if (stillAdding !== undefined) return pending(added, job, stillAdding.waiters);
      return pending(updated, job, updated.get(id)?.waiters ?? []);
    },
    get(key) {
      // A finished job whose delete waits for its group is gone already.
      if (finished.has(key.id)) return undefined;
      const waiting = updated.get(key.id) ?? added.get(key.id);
      // Not committed yet, but what the store will hold (and its writer already waits for).
      if (waiting !== undefined) return waiting.job;
      const row = selectJob.get(key.id) as { job: string } | undefined;
      return row === undefined ? undefined : (JSON.parse(row.job) as Job);
    },
    remove(key) {
      finished.add(key.id);
      group.later(part);
    },
    bury(letter: DeadLetter) {
      buryJob(letter);
    },
    takePending: () => (selectPending.all() as { job: string }[]).map((row) => JSON.parse(row.job) as Job),
    takeReplayed,
  };
}
