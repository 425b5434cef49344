import type pg from "pg";
import { requestInProgressError } from "../../../core/app/refusals.js";
import type { ConversationTurn } from "../../../core/conversation/conversation-store.js";
import type { DeadLetter } from "../../../core/dead-letters/dead-letter.js";
import { type Job, lastTakenSequence } from "../../../core/lifecycle/job.js";
import { type LaneStore, type LaneTicket, laneFencedError } from "../../../core/lifecycle/lane-store.js";
import type { Logger } from "../../../core/log/logger.js";
import { postponedUntil } from "../due-job.js";
import { type AddedPosition, AddedPositions } from "./added-positions.js";
import type { Fenced } from "./fenced-parts.js";
import { type Held, numberedUnder, supersede, type Waiter, withdrawSpent } from "./held-writes.js";
import { LaneNumbers } from "./lane-numbers.js";
import { type Admitted, admittedKey, type Numbered, writeLaneGroup } from "./postgres-lane-group.js";
import { restoreJob, takeReplayedJobs } from "./postgres-replays.js";
import { asStateError, mayHaveCommitted, postgresErrorMessage } from "./postgres-state-error.js";
import { createTurnBatch } from "./postgres-turn-batch.js";
import { SpentTickets } from "./spent-tickets.js";

/** The Postgres lane store, with what the replica coordination tells it. */
export interface PostgresLaneStore extends LaneStore {
  add(job: Job): Promise<void>;
  /** A claim read lane `key`'s last reply number under `epoch`: `lastSequence` answers from it. */
  primed(ticket: LaneTicket, last: number): void;
  /** Resolves once the writes asked for before the call are committed (or failed): before a close. */
  flush(): Promise<void>;
  /** Tells `listener` of each ticket a write of unknown outcome spent (see {@link SpentTickets}). */
  onSpent(listener: (ticket: LaneTicket) => void): void;
  /** Where the committed add of job `id` put it, once (see {@link AddedPosition}). */
  takePosition(id: string): AddedPosition | undefined;
}

/** How long a failed delete of a finished job waits before it is tried again. */
const DELETE_RETRY_MS = 1_000;

/**
 * How long a finished job's delete may wait for a group to ride on. A group of its own would
 * take the one write in flight from the next accepted message or stored reply, which wait for
 * it; riding on theirs costs nothing. A job finished and not yet deleted when its replica dies
 * is run again by the next owner, its replies posted again under their own ids.
 */
const FINISH_MAX_WAIT_MS = 1_000;

/**
 * The longest an accepted message waits for its commit before the client is answered 503: a
 * database that stops answering must not hang requests. One not yet sent is dropped (it is never
 * stored); one whose statement is under way may still commit, and is then delivered (a client
 * that retries with an `Idempotency-Key` gets the same message back).
 */
export const ADD_TIMEOUT_MS = 4_500;

/**
 * Keeps the lanes in Postgres, shared by the replicas. Every write of an event-loop turn
 * (accepted jobs with their `Idempotency-Key`s, progress, new replies' numbers and turns, dead
 * letters, deletes of finished jobs) is one statement ({@link writeLaneGroup}), and each write's
 * promise settles once that statement committed: a 200 and a reply POST wait for their commit
 * without paying one each. A write under a ticket whose epoch is no longer its lane's (another
 * replica claimed the conversation) is refused by the statement's fence and rejects with
 * `lane_fenced`; one the database did not take rejects with `state_unavailable`.
 *
 * A finished job's delete rides on the next group (under load, milliseconds later), or is written
 * on its own within {@link FINISH_MAX_WAIT_MS}. A delete that failed is tried again, unfenced: the
 * job is done whoever owns its lane by then, and behind the old ticket it would be refused once
 * this replica claimed the lane anew (after its lease ran out in the outage that failed it), and
 * the row would stay, counted in the backlog and run again by the lane's next owner.
 */
export function createPostgresLaneStore(
  pool: pg.Pool,
  replica: string,
  logger: Logger,
  maxTurns = 100,
): PostgresLaneStore {
  // What the group now forming will write. An id is in at most one of `added` and `updated`
  // (an update of a job whose add is still held replaces the add's copy); `deleted` wins over both.
  let added = new Map<string, { job: Job; waiters: Waiter[] }>();
  let updated = new Map<string, Held<Job>>();
  let deleted = new Map<string, Held<string>>();
  let buried = new Map<string, Held<DeadLetter>>();
  let turns: Held<readonly ConversationTurn[]>[] = [];
  let numbered = new Map<string, Numbered>();
  /** Finished jobs whose delete failed: deleted by id, in a statement of their own. */
  let leftFinished = new Set<string>();
  const last = new LaneNumbers(pool, replica);
  const spent = new SpentTickets();
  const placed = new AddedPositions();

  const deleteLeft = (): Promise<void> | undefined => {
    if (leftFinished.size === 0) return undefined;
    const ids = [...leftFinished];
    leftFinished = new Set();
    return pool.query("DELETE FROM webhook_channel.jobs WHERE id = ANY($1::text[])", [ids]).then(
      () => undefined,
      (error: unknown) => failed(0, ids, error),
    );
  };

  const write = (): Promise<void> | undefined => {
    const left = deleteLeft();
    const group = writeGroup();
    if (group === undefined) return left;
    return left === undefined ? group : Promise.all([left, group]).then(() => undefined);
  };

  const writeGroup = (): Promise<void> | undefined => {
    if (added.size + updated.size + deleted.size + buried.size + turns.length === 0) return undefined;
    const taken = { added, updated, deleted, buried, turns, numbered };
    added = new Map();
    updated = new Map();
    deleted = new Map();
    buried = new Map();
    turns = [];
    numbered = new Map();
    const fencedOf = <T>(held: Held<T>): Fenced<T> => ({ ticket: held.ticket, value: held.value });
    const group = {
      owner: replica,
      added: [...taken.added].map(([id, { job }]) => ({ job, stored: !taken.deleted.has(id) })),
      // A job finished since is deleted in this statement: its progress need not be written.
      updated: [...taken.updated].filter(([id]) => !taken.deleted.has(id)).map(([, held]) => fencedOf(held)),
      numbered: taken.numbered,
      turns: taken.turns.map(fencedOf),
      buried: [...taken.buried.values()].map(fencedOf),
      deleted: [...taken.deleted.values()].map(fencedOf),
      maxTurns,
      now: Date.now(),
    };
    const fencedWrites = [
      ...taken.updated.values(),
      ...taken.deleted.values(),
      ...taken.buried.values(),
      ...taken.turns,
    ];
    const addWaiters = [...taken.added.values()].flatMap((held) => held.waiters);
    return writeLaneGroup(pool, group).then(
      ({ admitted, positions }) => {
        placed.keep(positions);
        for (const [id, held] of taken.added) {
          // A stored job with a key and no position was left out: another message holds its key.
          const keyTaken =
            held.job.message.idempotencyKey !== undefined && !taken.deleted.has(id) && !positions.has(id);
          for (const waiter of held.waiters) {
            if (keyTaken) waiter.reject(requestInProgressError());
            else waiter.resolve();
          }
        }
        for (const held of fencedWrites) settle(held, admitted);
        for (const [key, { epoch, last: highest }] of taken.numbered) {
          if (admitted.has(admittedKey({ key, epoch }))) last.raised(key, highest);
        }
      },
      (error: unknown) => {
        const refusal = asStateError(error);
        for (const waiter of addWaiters) waiter.reject(refusal);
        for (const held of fencedWrites) for (const waiter of held.waiters) waiter.reject(refusal);
        // A delete of a finished job ends the same in any order with a late write: it spends nothing.
        if (mayHaveCommitted(error)) {
          for (const { ticket } of [...group.updated, ...group.turns, ...group.buried]) {
            last.forget(ticket.key);
            spent.spend(ticket);
          }
          withdrawSpent({ updated, deleted, buried, turns, numbered }, (ticket) => spent.has(ticket));
        }
        // A buried job's delete is not tried again without its letter: it stays, and runs again.
        failed(
          group.added.length,
          [...taken.deleted].filter(([id]) => !taken.buried.has(id)).map(([id]) => id),
          error,
        );
      },
    );
  };
  const batch = createTurnBatch(write, logger);

  const settle = (held: Held<unknown>, admitted: Admitted): void => {
    const ok = admitted.has(admittedKey(held.ticket));
    if (!ok) last.forget(held.ticket.key);
    for (const waiter of held.waiters) {
      if (ok) waiter.resolve();
      else waiter.reject(laneFencedError(held.ticket.key));
    }
  };

  const failed = (adds: number, finished: readonly string[], error: unknown): void => {
    const message = postgresErrorMessage(error);
    if (adds > 0) logger.error("cannot commit accepted messages to postgres", { count: adds, error: message });
    if (finished.length === 0) return;
    logger.error("cannot remove finished messages from postgres; retrying", { count: finished.length, error: message });
    for (const id of finished) if (!added.has(id) && !deleted.has(id)) leftFinished.add(id);
    batch.later(DELETE_RETRY_MS);
  };

  /**
   * A write under `ticket` in the group now forming (or, `eager` false, in the next group within
   * {@link FINISH_MAX_WAIT_MS}), resolved once that group committed.
   */
  const hold = <T>(into: Map<string, Held<T>>, id: string, ticket: LaneTicket, value: T, eager = true): Promise<void> =>
    new Promise<void>((resolve, reject) => {
      if (!supersede({ updated, deleted, buried }, id, ticket)) {
        reject(laneFencedError(ticket.key));
        return;
      }
      const waiters = into.get(id)?.waiters ?? [];
      waiters.push({ resolve, reject });
      into.set(id, { ticket, value, waiters });
      if (eager) batch.soon();
      else batch.later(FINISH_MAX_WAIT_MS);
    });

  const update = (ticket: LaneTicket, job: Job): Promise<void> => {
    // A job's update, unlike its delete, is not safe in any order with a late write of its lane.
    if (spent.has(ticket)) return Promise.reject(laneFencedError(ticket.key));
    const id = job.message.id;
    const stillAdding = added.get(id);
    // Not yet written: the add's row takes the progress (no other runner knows the job yet).
    if (stillAdding !== undefined) {
      stillAdding.job = job;
      return new Promise<void>((resolve, reject) => stillAdding.waiters.push({ resolve, reject }));
    }
    return hold(updated, id, ticket, job);
  };

  return {
    add(job) {
      const id = job.message.id;
      updated.delete(id);
      return new Promise<void>((resolve, reject) => {
        const held = added.get(id) ?? { job, waiters: [] };
        held.job = job;
        const timer = setTimeout(() => {
          // Not sent yet: it never will be. Sent: its commit is not known; either way, a 503.
          if (added.get(id) === held) added.delete(id);
          reject(asStateError(new Error(`no commit within ${ADD_TIMEOUT_MS} ms`)));
        }, ADD_TIMEOUT_MS);
        held.waiters.push({
          resolve: () => {
            clearTimeout(timer);
            resolve();
          },
          reject: (error) => {
            clearTimeout(timer);
            reject(error);
          },
        });
        added.set(id, held);
        batch.soon();
      });
    },
    primed: (ticket, value) => last.primed(ticket, value),
    async lastSequence(ticket) {
      if (spent.has(ticket)) throw laneFencedError(ticket.key);
      return last.lastSequence(ticket);
    },
    save(ticket, job, answered) {
      if (spent.has(ticket)) return Promise.reject(laneFencedError(ticket.key));
      const written = update(ticket, job);
      if (answered === undefined) return written;
      numbered.set(ticket.key, numberedUnder(numbered.get(ticket.key), ticket.epoch, lastTakenSequence(job)));
      if (answered.turns.length === 0) return written;
      const kept = new Promise<void>((resolve, reject) => {
        turns.push({ ticket, value: answered.turns, waiters: [{ resolve, reject }] });
        batch.soon();
      });
      return Promise.all([written, kept]).then(() => undefined);
    },
    finish: (ticket, job) => hold(deleted, job.message.id, ticket, job.message.id, false),
    postpone: (ticket, job, dueAt) => update(ticket, postponedUntil(job, dueAt)),
    hold: (ticket, job) => update(ticket, job),
    bury(ticket, letter) {
      // The letter and the job's delete are in one statement: one transaction.
      const id = letter.job.message.id;
      if (spent.has(ticket) || !supersede({ updated, deleted, buried }, id, ticket)) {
        return Promise.reject(laneFencedError(ticket.key));
      }
      buried.set(id, { ticket, value: letter, waiters: [] });
      return hold(deleted, id, ticket, id);
    },
    restore: (job) => restoreJob(pool, job),
    // A replayed job is placed anew: a position its first add left (its client was answered 503) is stale.
    takeReplayed: async (room) => {
      const jobs = await takeReplayedJobs(pool, replica, room);
      for (const job of jobs) placed.take(job.message.id);
      return jobs;
    },
    flush: () => batch.flush(),
    onSpent: (listener) => spent.onSpent(listener),
    takePosition: (id) => placed.take(id),
  };
}
