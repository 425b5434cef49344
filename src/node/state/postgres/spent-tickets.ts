import type { LaneTicket } from "../../../core/lifecycle/lane-store.js";
import { LruMap } from "../../../core/lru-map.js";

/** Lanes whose spent epoch is remembered; beyond it the least recent are forgotten. */
const MAX_LANES = 100_000;

/**
 * The tickets this replica may no longer write under: a write under one failed without an
 * answer (a time limit, a broken connection), so it may still commit once the database answers
 * again, in any order with a later write of the lane sent on another connection. A retry under the
 * same ticket could be overtaken by it (a job's earlier copy stored over its replies, a `sequence`
 * skipped), so none is sent: the lane is claimed again, under a new epoch that the late write's
 * fence refuses, and read again from what the database holds.
 */
export class SpentTickets {
  private readonly spent = new LruMap<number>();
  private listener: (ticket: LaneTicket) => void = () => undefined;

  /** `listener` is told of each ticket just spent (the replica claims its lane again); it must not throw. */
  onSpent(listener: (ticket: LaneTicket) => void): void {
    this.listener = listener;
  }

  /** A write under `ticket` failed, and may have been committed all the same. */
  spend(ticket: LaneTicket): void {
    if (this.has(ticket)) return;
    this.spent.set(ticket.key, ticket.epoch);
    this.spent.trimTo(MAX_LANES);
    try {
      this.listener(ticket);
    } catch {
      // The listener's failure must not keep the failed group's waiters from being told.
    }
  }

  /** True when no write may be sent under `ticket`. */
  has(ticket: LaneTicket): boolean {
    return (this.spent.get(ticket.key) ?? 0) >= ticket.epoch;
  }
}
