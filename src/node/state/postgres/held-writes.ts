import type { ConversationTurn } from "../../../core/conversation/conversation-store.js";
import type { DeadLetter } from "../../../core/dead-letters/dead-letter.js";
import { type Job, lastTakenSequence } from "../../../core/lifecycle/job.js";
import { type LaneTicket, laneFencedError } from "../../../core/lifecycle/lane-store.js";

/** Who waits for a write: settled once its group committed, or was refused. */
export interface Waiter {
  readonly resolve: () => void;
  readonly reject: (error: unknown) => void;
}

/** A write of the group now forming, with who waits for it. */
export interface Held<T> {
  readonly ticket: LaneTicket;
  value: T;
  readonly waiters: Waiter[];
}

/** The fenced writes of the group now forming, by job id. */
export interface HeldWrites {
  readonly updated: Map<string, Held<Job>>;
  readonly deleted: Map<string, Held<string>>;
  /** A buried job's letter; its waiters wait on the job's delete, in the same statement. */
  readonly buried: Map<string, Held<DeadLetter>>;
}

/** Refuses a held write: its lane is under a newer claim. */
export function refuseHeld(held: Held<unknown>): void {
  for (const waiter of held.waiters) waiter.reject(laneFencedError(held.ticket.key));
}

/**
 * Two runs of one job in one replica, under two of its claims of the lane (a run that outlived a
 * claim, and the run of the copy read again after it), may write in one group. Only the newer
 * claim's write is made, and each run is told about its own: a write merged into the other
 * claim's would be answered by that claim's fence. Returns false when `ticket` is the older claim
 * (its write is to be refused); otherwise what an older claim holds for `id` is refused and taken
 * out of `writes`. Writes under one claim are one run's, in order, and are merged as they come.
 */
export function supersede(writes: HeldWrites, id: string, ticket: LaneTicket): boolean {
  const update = writes.updated.get(id);
  const removal = writes.deleted.get(id);
  if ((update?.ticket.epoch ?? 0) > ticket.epoch || (removal?.ticket.epoch ?? 0) > ticket.epoch) return false;
  if (update !== undefined && update.ticket.epoch < ticket.epoch) {
    writes.updated.delete(id);
    refuseHeld(update);
  }
  if (removal !== undefined && removal.ticket.epoch < ticket.epoch) {
    writes.deleted.delete(id);
    writes.buried.delete(id);
    refuseHeld(removal);
  }
  return true;
}

/** The group now forming, as {@link withdrawSpent} changes it. */
export interface FormingWrites extends HeldWrites {
  readonly turns: Held<readonly ConversationTurn[]>[];
  /** Lane → the highest reply number its saves in the group took, under its newest claim. */
  readonly numbered: Map<string, { readonly epoch: number; readonly last: number }>;
}

/**
 * Takes out of the group now forming every job update and turn under a ticket `isSpent` says is
 * spent (see `SpentTickets`), refusing it: held while the failed group was in flight, it must not
 * be sent once the group failed, or it could commit before the failed one's late commit. A lane's
 * highest number is taken again from what is left of it. Deletes of finished jobs (with a dead
 * letter or not) stay: in whatever order they and a late write commit, the job ends deleted.
 */
export function withdrawSpent(writes: FormingWrites, isSpent: (ticket: LaneTicket) => boolean): void {
  const lanes = new Set<string>();
  const withdraw = (held: Held<unknown>): void => {
    lanes.add(held.ticket.key);
    refuseHeld(held);
  };
  for (const [id, held] of writes.updated) {
    if (!isSpent(held.ticket)) continue;
    writes.updated.delete(id);
    withdraw(held);
  }
  const kept = writes.turns.filter((held) => !isSpent(held.ticket));
  for (const held of writes.turns) if (isSpent(held.ticket)) withdraw(held);
  writes.turns.splice(0, writes.turns.length, ...kept);
  for (const key of lanes) {
    let highest: { epoch: number; last: number } | undefined;
    for (const held of writes.updated.values()) {
      if (held.ticket.key !== key) continue;
      highest = numberedUnder(highest, held.ticket.epoch, lastTakenSequence(held.value));
    }
    if (highest !== undefined && highest.last > 0) writes.numbered.set(key, highest);
    else writes.numbered.delete(key);
  }
}

/**
 * A lane's numbers in a group after a save under `epoch` took up to `last`: a newer claim's
 * replace an older one's (whose writes the fence refuses), an older claim's change nothing.
 */
export function numberedUnder(
  known: { readonly epoch: number; readonly last: number } | undefined,
  epoch: number,
  last: number,
): { epoch: number; last: number } {
  if (known === undefined || known.epoch < epoch) return { epoch, last };
  if (known.epoch > epoch) return { epoch: known.epoch, last: known.last };
  return { epoch, last: Math.max(known.last, last) };
}
