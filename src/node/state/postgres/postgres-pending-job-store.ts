import type pg from "pg";
import type { DeadLetter } from "../../../core/dead-letters/dead-letter.js";
import type { Job } from "../../../core/lifecycle/job.js";
import type { PendingJobStore } from "../../../core/lifecycle/pending-job-store.js";
import type { Logger } from "../../../core/log/logger.js";
import { writeJobGroup } from "./postgres-job-group.js";
import { inTransaction } from "./postgres-pool.js";
import { createPostgresSequenceRecord } from "./postgres-sequence-counter.js";
import { asStateError, postgresErrorMessage } from "./postgres-state-error.js";
import { createTurnBatch } from "./postgres-turn-batch.js";

/** The Postgres job store, with what the replica coordination reads from it. */
export interface PostgresPendingJobStore extends PendingJobStore {
  add(job: Job): Promise<void>;
  update(job: Job): Promise<void>;
  remove(key: { readonly id: string }): Promise<void>;
  bury(letter: DeadLetter): Promise<void>;
  /**
   * A conversation's unfinished jobs (not replayed dead letters), in acceptance order: what a
   * replica runs when it takes the conversation over. This replica's writes made before the
   * call are committed first, so the answer includes them.
   */
  lane(conversation: string): Promise<Job[]>;
  /**
   * Dead letters replayed (`dead-letters replay`, the admin API of any replica) and not yet
   * taken, oldest first, marked as taken: at most `room(channel)` of each channel (default:
   * all); the rest stay for a later call. Replicas taking at once each get different jobs.
   */
  takeReplayed(room?: (channel: string) => number): Promise<Job[]>;
  /** Resolves once the writes asked for before the call are committed (or failed): before a close. */
  flush(): Promise<void>;
}

interface Waiter {
  readonly resolve: () => void;
  readonly reject: (error: unknown) => void;
}

interface Held {
  job: Job;
  readonly waiters: Waiter[];
}

/** What one group took, still readable by `get` while its statement runs. */
interface Taken {
  readonly added: ReadonlyMap<string, Held>;
  readonly updated: ReadonlyMap<string, Held>;
  readonly deleted: ReadonlyMap<string, Waiter[]>;
}

/** How long a failed delete of a finished job waits before it is tried again. */
const DELETE_RETRY_MS = 1_000;

/**
 * Keeps accepted jobs in Postgres. Every write of an event-loop turn (accepted jobs with their
 * `Idempotency-Key`s, progress with the conversations' highest reply numbers, dead letters,
 * deletes of finished jobs) is one statement ({@link writeJobGroup}), and each write's promise
 * settles once that statement committed: a 200 and a reply POST wait for their commit without
 * paying one each. A write the database did not take rejects with `state_unavailable`.
 *
 * Finished jobs are deleted in the next group too, not a second later: with replicas a job
 * still stored when this one dies would be run again by the replica that takes over. A delete
 * that failed is tried again (the job stays readable as gone meanwhile).
 */
export function createPostgresPendingJobStore(pool: pg.Pool, logger: Logger): PostgresPendingJobStore {
  const sequences = createPostgresSequenceRecord();
  // What the group now forming will write. An id is in at most one of `added` and `updated`
  // (an update of a job whose add is still held replaces the add's copy); `deleted` wins over both.
  let added = new Map<string, Held>();
  let updated = new Map<string, Held>();
  let deleted = new Map<string, Waiter[]>();
  let buried = new Map<string, DeadLetter>();
  // Callers of writes another write made moot (a delete undone by an add): told with the group.
  let alsoWaiting: Waiter[] = [];
  let inFlight: Taken | undefined;

  const write = (): Promise<void> | undefined => {
    if (added.size === 0 && updated.size === 0 && deleted.size === 0 && alsoWaiting.length === 0) return undefined;
    const taken: Taken = { added, updated, deleted };
    const letters = buried;
    const others = alsoWaiting;
    added = new Map();
    updated = new Map();
    deleted = new Map();
    buried = new Map();
    alsoWaiting = [];
    const numbered = new Map<string, number>();
    for (const { job } of taken.added.values()) sequences.note(job, numbered);
    for (const { job } of taken.updated.values()) sequences.note(job, numbered);
    const group = {
      added: [...taken.added].map(([id, { job }]) => ({ job, stored: !taken.deleted.has(id) })),
      // A job finished since is deleted in this statement: its progress need not be written.
      updated: [...taken.updated].filter(([id]) => !taken.deleted.has(id)).map(([, { job }]) => job),
      numbered,
      buried: [...letters.values()],
      deleted: [...taken.deleted.keys()],
    };
    const waiters = [
      ...others,
      ...[...taken.added.values(), ...taken.updated.values()].flatMap((held) => held.waiters),
      ...[...taken.deleted.values()].flat(),
    ];
    inFlight = taken;
    return writeJobGroup(pool, group).then(
      () => {
        if (inFlight === taken) inFlight = undefined;
        sequences.committed(numbered);
        for (const waiter of waiters) waiter.resolve();
      },
      (error: unknown) => {
        if (inFlight === taken) inFlight = undefined;
        // A buried job's delete is not tried again without its letter: it stays, and runs again.
        const finished = [...taken.deleted.keys()].filter((id) => !letters.has(id));
        failed(group.added.length, finished, error);
        const refusal = asStateError(error);
        for (const waiter of waiters) waiter.reject(refusal);
      },
    );
  };
  const batch = createTurnBatch(write, logger);

  const failed = (adds: number, finished: readonly string[], error: unknown): void => {
    const message = postgresErrorMessage(error);
    if (adds > 0) logger.error("cannot commit accepted messages to postgres", { count: adds, error: message });
    if (finished.length === 0) return;
    logger.error("cannot remove finished messages from postgres; retrying", { count: finished.length, error: message });
    for (const id of finished) {
      if (!added.has(id) && !deleted.has(id)) deleted.set(id, []);
    }
    batch.later(DELETE_RETRY_MS);
  };

  /** The job's write in the group now forming, resolved once that group committed. */
  const hold = (into: Map<string, Held>, job: Job, waiters: Waiter[]): Promise<void> =>
    new Promise<void>((resolve, reject) => {
      waiters.push({ resolve, reject });
      into.set(job.message.id, { job, waiters });
      batch.soon();
    });

  /** A delete (finished or buried) in the group now forming. */
  const drop = (id: string): Promise<void> =>
    new Promise<void>((resolve, reject) => {
      const waiters = deleted.get(id) ?? [];
      waiters.push({ resolve, reject });
      deleted.set(id, waiters);
      batch.soon();
    });

  const select = async <Row extends pg.QueryResultRow>(text: string, values: unknown[]): Promise<Row[]> => {
    try {
      return (await pool.query<Row>(text, values)).rows;
    } catch (error) {
      throw asStateError(error);
    }
  };

  const takeReplayed = async (room: (channel: string) => number = () => Number.POSITIVE_INFINITY): Promise<Job[]> => {
    // Most polls find nothing: one indexed read, no transaction.
    const waiting = await select<{ waiting: boolean }>(
      "SELECT EXISTS (SELECT 1 FROM webhook_channel.jobs WHERE state = 'replay') AS waiting",
      [],
    );
    if (waiting[0]?.waiting !== true) return [];
    try {
      return await inTransaction(pool, async (client) => {
        // SKIP LOCKED: what another replica is taking now is its own, not a reason to wait.
        const rows = await client.query<{ id: string; channel: string }>(
          "SELECT id, channel FROM webhook_channel.jobs WHERE state = 'replay' ORDER BY seq FOR UPDATE SKIP LOCKED",
        );
        const left = new Map<string, number>();
        const ids: string[] = [];
        for (const row of rows.rows) {
          const free = left.get(row.channel) ?? room(row.channel);
          left.set(row.channel, Math.max(0, free - 1));
          if (free >= 1) ids.push(row.id);
        }
        if (ids.length === 0) return [];
        const taken = await client.query<{ job: string }>(
          `WITH taken AS (
             UPDATE webhook_channel.jobs SET state = 'pending' WHERE id = ANY($1::text[]) RETURNING seq, job)
           SELECT job FROM taken ORDER BY seq`,
          [ids],
        );
        return taken.rows.map((row) => JSON.parse(row.job) as Job);
      });
    } catch (error) {
      throw asStateError(error);
    }
  };

  return {
    add(job) {
      const id = job.message.id;
      // A job stored again (the contract allows it) is no longer finished.
      const undone = deleted.get(id);
      if (undone !== undefined) {
        deleted.delete(id);
        alsoWaiting.push(...undone);
      }
      const earlier = added.get(id) ?? updated.get(id);
      updated.delete(id);
      return hold(added, job, earlier?.waiters ?? []);
    },
    update(job) {
      const id = job.message.id;
      const stillAdding = added.get(id);
      // Not yet written: the add's row takes the progress, and its callers wait as before.
      if (stillAdding !== undefined) return hold(added, job, stillAdding.waiters);
      return hold(updated, job, updated.get(id)?.waiters ?? []);
    },
    async get(key) {
      for (const taken of [{ added, updated, deleted }, inFlight]) {
        if (taken === undefined) continue;
        // A finished job whose delete is under way is gone already.
        if (taken.deleted.has(key.id)) return undefined;
        // Not committed yet, but what the store will hold (and its writer already waits for).
        const waiting = taken.updated.get(key.id) ?? taken.added.get(key.id);
        if (waiting !== undefined) return waiting.job;
      }
      const rows = await select<{ job: string }>(
        "SELECT job FROM webhook_channel.jobs WHERE id = $1 AND state = 'pending'",
        [key.id],
      );
      const row = rows[0];
      return row === undefined ? undefined : (JSON.parse(row.job) as Job);
    },
    remove: (key) => drop(key.id),
    bury(letter) {
      // The letter and the job's delete are in one statement: one transaction.
      buried.set(letter.job.message.id, letter);
      return drop(letter.job.message.id);
    },
    async lane(conversation) {
      await batch.flush();
      const rows = await select<{ job: string }>(
        "SELECT job FROM webhook_channel.jobs WHERE conversation = $1 AND state = 'pending' ORDER BY seq",
        [conversation],
      );
      return rows.map((row) => JSON.parse(row.job) as Job);
    },
    takeReplayed,
    flush: () => batch.flush(),
  };
}
