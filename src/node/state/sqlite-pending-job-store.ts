import type { DeadLetter } from "../../core/dead-letters/dead-letter.js";
import { IDEMPOTENCY_TTL_MS } from "../../core/idempotency/idempotency-store.js";
import type { Logger } from "../../core/log/logger.js";
import type { Job } from "../../core/sequencer/job.js";
import type { PendingJobStore } from "../../core/sequencer/pending-job-store.js";
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

/**
 * Keeps jobs, idempotency keys and dead letters in SQLite. Accepted jobs are committed in
 * groups: every `add` of one event-loop turn shares one transaction, so the 200 waits
 * for a commit without paying one per request. An `Idempotency-Key` is committed in the same
 * transaction as its message, so a key is never remembered for a message that was lost.
 */
export function createSqlitePendingJobStore(db: StateDb, logger: Logger): SqlitePendingJobStore {
  // An upsert, like the other stores: one duplicate id must not fail the group it was committed with.
  const insertJob = db.prepare(
    "INSERT INTO jobs (id, job) VALUES (?, ?) ON CONFLICT (id) DO UPDATE SET job = excluded.job",
  );
  const insertKey = db.prepare(
    "INSERT OR REPLACE INTO idempotency (channel, key, message_id, conversation_id, expires_at) VALUES (?, ?, ?, ?, ?)",
  );
  const updateJob = db.prepare("UPDATE jobs SET job = ? WHERE id = ?");
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

  let batch: { job: Job; resolve: () => void; reject: (error: unknown) => void }[] = [];
  const commitBatch = db.transaction((jobs: readonly Job[]) => {
    for (const job of jobs) {
      insertJob.run(job.message.id, JSON.stringify(job));
      const key = job.message.idempotencyKey;
      if (key !== undefined) {
        insertKey.run(
          job.message.channel,
          key,
          job.message.id,
          job.message.message.conversationId,
          job.message.receivedAt + IDEMPOTENCY_TTL_MS,
        );
      }
    }
  });
  const flush = (): void => {
    const current = batch;
    batch = [];
    try {
      commitBatch(current.map((entry) => entry.job));
      for (const entry of current) entry.resolve();
    } catch (error) {
      logger.error("cannot commit accepted messages to state_dir", { count: current.length, error: String(error) });
      for (const entry of current) entry.reject(error);
    }
  };

  let finished: string[] = [];
  const deleteJobs = db.transaction((ids: readonly string[]) => {
    for (const id of ids) deleteJob.run(id);
  });
  const flushFinished = (): void => {
    const ids = finished;
    finished = [];
    try {
      deleteJobs(ids);
    } catch (error) {
      // The jobs stay stored and are delivered again after a restart, with the same ids.
      logger.error("cannot remove finished messages from state_dir", { count: ids.length, error: String(error) });
    }
  };

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
      return new Promise<void>((resolve, reject) => {
        if (batch.length === 0) setImmediate(flush);
        batch.push({ job, resolve, reject });
      });
    },
    update(job) {
      updateJob.run(JSON.stringify(job), job.message.id);
    },
    get(key) {
      // A finished job whose delete waits for its group is gone already.
      if (finished.includes(key.id)) return undefined;
      const row = selectJob.get(key.id) as { job: string } | undefined;
      return row === undefined ? undefined : (JSON.parse(row.job) as Job);
    },
    remove(key) {
      // Deleting a finished job can wait for its group: if the process dies first, the
      // job is delivered again with the same webhook-id, which receivers deduplicate.
      if (finished.length === 0) setImmediate(flushFinished);
      finished.push(key.id);
    },
    bury(letter: DeadLetter) {
      db.transaction(() => {
        insertDead.run(letter.job.message.id, letter.job.message.channel, JSON.stringify(letter), letter.diedAt);
        deleteJob.run(letter.job.message.id);
      })();
    },
    takePending: () => (selectPending.all() as { job: string }[]).map((row) => JSON.parse(row.job) as Job),
    takeReplayed,
  };
}
