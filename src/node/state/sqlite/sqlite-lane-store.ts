import { stateUnavailableError } from "../../../core/app/refusals.js";
import type { ConversationStore } from "../../../core/conversation/conversation-store.js";
import type { DeadLetter } from "../../../core/dead-letters/dead-letter.js";
import type { Job } from "../../../core/lifecycle/job.js";
import { isLaneFenced, type LaneStore, type LaneTicket, laneFencedError } from "../../../core/lifecycle/lane-store.js";
import type { Logger } from "../../../core/log/logger.js";
import { LruMap } from "../../../core/lru-map.js";
import { type DueJob, postponedUntil, readDueJob } from "../due-job.js";
import type { SqliteEpoch } from "./sqlite-epoch.js";
import type { GroupBatch, GroupCommit, GroupPart } from "./sqlite-group-commit.js";
import { type IdempotencyRow, idempotencyRow } from "./sqlite-idempotency-store.js";
import { createSqliteReplayPickup } from "./sqlite-replay-pickup.js";
import { createRowBatch } from "./sqlite-row-batch.js";
import { createSequenceRecord } from "./sqlite-sequence-record.js";
import type { StateDb } from "./sqlite-state.js";

/** The lane store of `state_dir`, with what a start recovers from it. */
export interface SqliteLaneStore extends LaneStore {
  /** The epoch of this process's claim on the file. */
  readonly epoch: number;
  /**
   * Up to `limit` unfinished jobs of the last run stored after position `after` (0: from the
   * first), in acceptance order, each with its position and, for one that waits for a retry, its
   * due time: a resume reads them in slices.
   */
  readPending(after: number, limit: number): PendingRow[];
  takeReplayed(room: (channel: string) => number): readonly Job[];
  /** The lanes' counters were deleted (idle conversations): their next numbers are read and written anew. */
  forgetNumbers(keys: readonly string[]): void;
}

/** A stored unfinished job, with the time its retry is due when it waits for one. */
export interface PendingRow {
  readonly seq: number;
  readonly job: Job;
  readonly dueAt: number | undefined;
}

/** Lanes whose last number is remembered; one forgotten is read again. */
const MAX_LANES = 100_000;

interface Waiter {
  readonly resolve: () => void;
  readonly reject: (error: unknown) => void;
}

/**
 * Keeps the lanes in SQLite, writing through the connection's {@link GroupCommit}: what one
 * event-loop turn asks for shares one transaction, which first checks that this process still
 * holds the file (`epoch`), so every write of a process another one took over is refused.
 *
 * - `add` (an accepted message, with its `Idempotency-Key`, so that a key is never remembered
 *   for a message that was lost) resolves once that transaction committed: the 200 waits for
 *   a commit without paying one per request.
 * - `save` resolves the same way, so a run posts its replies only once they are stored; new
 *   replies move their conversation's last number (`sequences`) and bring their turns into the
 *   same transaction.
 * - `finish` of a job may wait: it rides on the next group, or commits on its own after at most a
 *   second. Should the process die first, the job is delivered again with the same webhook-id,
 *   which receivers deduplicate.
 *
 * `bury` commits at once, in its own transaction: the admin API's dead-letter store finds the
 * letter there right after (dead letters are the exception, not the path to make fast).
 */
export function createSqliteLaneStore(
  db: StateDb,
  logger: Logger,
  group: GroupCommit,
  epoch: SqliteEpoch,
  memory: ConversationStore,
): SqliteLaneStore {
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
    6,
    (values) =>
      `INSERT OR REPLACE INTO idempotency (channel, key, message_id, conversation_id, expires_at, fingerprint) VALUES ${values}`,
  );
  const updateJobs = createRowBatch(
    db,
    2,
    (values) =>
      `WITH progress (id, job) AS (VALUES ${values}) UPDATE jobs SET job = progress.job FROM progress WHERE jobs.id = progress.id`,
  );
  // The finished jobs of a group in one statement.
  const deleteJobs = db.prepare("DELETE FROM jobs WHERE id IN (SELECT value FROM json_each(?))");
  const deleteJob = db.prepare("DELETE FROM jobs WHERE id = ?");
  // A letter that died no later than the stored one changes nothing, as the store contract says.
  const insertDead = db.prepare(
    `INSERT INTO dead_letters (id, channel, letter, died_at) VALUES (?, ?, ?, ?)
     ON CONFLICT (id) DO UPDATE SET channel = excluded.channel, letter = excluded.letter, died_at = excluded.died_at
     WHERE excluded.died_at > dead_letters.died_at`,
  );
  const insertReplay = db.prepare("INSERT OR REPLACE INTO jobs (id, job, state) VALUES (?, ?, 'replay')");
  const selectLast = db.prepare<[string], { last: number }>("SELECT last FROM sequences WHERE conversation = ?");
  const selectPending = db.prepare(
    "SELECT seq, job FROM jobs WHERE state = 'pending' AND seq > ? ORDER BY seq LIMIT ?",
  );
  const replays = createSqliteReplayPickup(db, epoch);
  const sequences = createSequenceRecord(db);
  const buryJob = db.transaction((letter: DeadLetter) => {
    epoch.check();
    insertDead.run(letter.job.message.id, letter.job.message.channel, JSON.stringify(letter), letter.diedAt);
    deleteJob.run(letter.job.message.id);
    sequences.stamp();
  });

  // What the group now forming will write. An id is in at most one of `added` and `updated`:
  // an update of a job whose add has not committed replaces the add's copy.
  let added = new Map<string, { job: DueJob; waiters: Waiter[] }>();
  let updated = new Map<string, { job: DueJob; waiters: Waiter[] }>();
  let finished = new Map<string, Waiter[]>();
  // Deletes of finished jobs are failing and being tried again (logged once until they commit).
  let removalsFailing = false;
  // Each lane's last number as committed: this process alone writes them while it holds the file.
  const last = new LruMap<number>();

  const take = (): GroupBatch | undefined => {
    if (added.size === 0 && updated.size === 0 && finished.size === 0) return undefined;
    const adds = added;
    const updates = updated;
    const removes = finished;
    added = new Map();
    updated = new Map();
    finished = new Map();
    const noted = new Map<string, number>();
    for (const { job } of adds.values()) sequences.note(job, noted);
    for (const { job } of updates.values()) sequences.note(job, noted);
    return {
      write() {
        const jobs: [string, string][] = [];
        const keys: IdempotencyRow[] = [];
        for (const { job } of adds.values()) {
          const { message } = job;
          jobs.push([message.id, JSON.stringify(job)]);
          const key = idempotencyRow(message);
          if (key !== undefined) keys.push(key);
        }
        if (jobs.length > 0) insertJobs(jobs);
        if (keys.length > 0) insertKeys(keys);
        // A job finished since is deleted in this transaction: its progress need not be written.
        const progress: [string, string][] = [];
        for (const [id, { job }] of updates) if (!removes.has(id)) progress.push([id, JSON.stringify(job)]);
        if (progress.length > 0) updateJobs(progress);
        sequences.write(noted);
        if (removes.size > 0) deleteJobs.run(JSON.stringify([...removes.keys()]));
      },
      settled(error) {
        if (error === undefined) {
          sequences.committed(noted);
          for (const [key, highest] of noted) {
            // Never lower: a job's older numbers may be noted again once the record forgot them.
            const known = last.get(key);
            if (known !== undefined && highest > known) last.set(key, highest);
          }
        } else if (adds.size > 0) {
          logger.error("cannot commit accepted messages to state_dir", { count: adds.size, error: String(error) });
        }
        if (error !== undefined && removes.size > 0) {
          // Stored, they would be delivered again after a restart (with the same ids): their deletes
          // ride on the next group, or go on their own (LATER_WRITES_MAX_WAIT_MS), until one commits;
          // said once while they keep failing. Not for a process another one took the file from:
          // the jobs are the other one's now.
          const retried = !isLaneFenced(error);
          if (!removalsFailing)
            logger.error("cannot remove finished messages from state_dir", { error: String(error), retried });
          removalsFailing = retried;
          if (retried) retryRemoves(removes.keys());
        } else if (removalsFailing && removes.size > 0) {
          removalsFailing = false;
          logger.info("finished messages are removed from state_dir again");
        }
        // An accepted message of a process that no longer holds the file is refused like any other
        // that cannot be stored: 503, and the client sends it again (to the process that holds it).
        const refusal = isLaneFenced(error) ? stateUnavailableError(error) : error;
        for (const { waiters } of adds.values()) settle(waiters, refusal);
        for (const { waiters } of updates.values()) settle(waiters, error);
        for (const waiters of removes.values()) settle(waiters, error);
      },
    };
  };
  const part: GroupPart = { take };

  /** Finished jobs whose delete failed, for the next group: unless stored again since. */
  const retryRemoves = (ids: Iterable<string>): void => {
    for (const id of ids) if (!added.has(id) && !updated.has(id) && !finished.has(id)) finished.set(id, []);
    group.later(part);
  };

  /** The job's write in the group now forming, resolved once that group committed. */
  const pending = (
    into: Map<string, { job: DueJob; waiters: Waiter[] }>,
    job: DueJob,
    waiters: Waiter[],
  ): Promise<void> =>
    new Promise<void>((resolve, reject) => {
      waiters.push({ resolve, reject });
      into.set(job.message.id, { job, waiters });
      group.soon(part);
    });

  /** A write under `ticket`: refused at once when the ticket is not of this process's epoch. */
  const mine = (ticket: LaneTicket): void => {
    if (ticket.epoch !== epoch.value) throw laneFencedError(ticket.key);
  };

  const update = (ticket: LaneTicket, job: DueJob): Promise<void> => {
    mine(ticket);
    const id = job.message.id;
    const stillAdding = added.get(id);
    // Not yet committed: the add's row takes the progress, and its waiters wait as before.
    if (stillAdding !== undefined) return pending(added, job, stillAdding.waiters);
    return pending(updated, job, updated.get(id)?.waiters ?? []);
  };

  return {
    epoch: epoch.value,
    add(job) {
      const id = job.message.id;
      // A job stored again (the contract allows it) is no longer finished.
      settle(finished.get(id) ?? [], undefined);
      finished.delete(id);
      const earlier = added.get(id) ?? updated.get(id);
      updated.delete(id);
      return pending(added, job, earlier?.waiters ?? []);
    },
    lastSequence(ticket) {
      mine(ticket);
      const known = last.get(ticket.key);
      if (known !== undefined) return known;
      const read = selectLast.get(ticket.key)?.last ?? 0;
      last.set(ticket.key, read);
      last.trimTo(MAX_LANES);
      return read;
    },
    save(ticket, job, answered) {
      const written = update(ticket, job);
      if (answered === undefined || answered.turns.length === 0) return written;
      // The turns join the same group: one transaction keeps the replies and the memory.
      return Promise.all([written, memory.append(ticket.key, answered.turns)]).then(() => undefined);
    },
    finish(ticket, job) {
      mine(ticket);
      sequences.ended(ticket.key, job);
      // Its commit may wait (see the store's note): nothing depends on it but the restart's count.
      return new Promise<void>((resolve, reject) => {
        const waiters = finished.get(job.message.id) ?? [];
        waiters.push({ resolve, reject });
        finished.set(job.message.id, waiters);
        group.later(part);
      });
    },
    postpone: (ticket, job, dueAt) => update(ticket, postponedUntil(job, dueAt)),
    hold: (ticket, job) => update(ticket, job),
    bury(ticket, letter) {
      mine(ticket);
      sequences.ended(ticket.key, letter.job);
      // The write lock first (see the group commit): another writer's lock is waited for.
      buryJob.immediate(letter);
      sequences.committed(new Map());
    },
    restore(job) {
      insertReplay.run(job.message.id, JSON.stringify(job));
    },
    forgetNumbers(keys) {
      sequences.forget(keys);
      for (const key of keys) last.delete(key);
    },
    readPending: (after, limit) =>
      (selectPending.all(after, limit) as { seq: number; job: string }[]).map((row) => ({
        seq: row.seq,
        ...readDueJob(row.job),
      })),
    takeReplayed: (room) => replays.take(room),
  };
}

function settle(waiters: readonly Waiter[], error: unknown): void {
  for (const waiter of waiters) {
    if (error === undefined) waiter.resolve();
    else waiter.reject(error);
  }
}
