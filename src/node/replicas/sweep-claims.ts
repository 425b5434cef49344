import type { JobNotice } from "../state/postgres/job-notices.js";
import { CONNECT_TIMEOUT_MS, CONNECTION_CHECK_MS, STATEMENT_TIMEOUT_MS } from "../state/postgres/postgres-pool.js";
import type { LaneLoader, OwnedLane } from "./lane-loader.js";
import type { Claim, ClaimRequest } from "./lane-statements.js";
import type { OwnedLanes } from "./owned-lanes.js";

/**
 * How long after a refused write it may still commit: the write its message waited for may have
 * been sent after the refusal, once a connection was free, and then run until the server stopped it
 * (or noticed its client gone). A claim before then could find nothing and let the lane go.
 */
export const UNSURE_SETTLES_AFTER_MS = CONNECT_TIMEOUT_MS + STATEMENT_TIMEOUT_MS + 2 * CONNECTION_CHECK_MS;

/** What the sweep's claims work with (see `replica-lanes.ts`). */
export interface SweepClaimsDeps {
  readonly replica: string;
  readonly owned: OwnedLanes;
  readonly loader: LaneLoader;
  readonly claim: (request: ClaimRequest) => Promise<Claim>;
  readonly notify: (notice: JobNotice & { readonly owner: string }) => Promise<true>;
  /** Runs `step` after every step of conversation `key` under way, one at a time. */
  readonly serial: <T>(key: string, step: () => Promise<T>) => Promise<T>;
  /** True while nothing may be claimed: the replica stopped, or takes stock after a lapse. */
  readonly halted: () => boolean;
}

/** The claims a sweep makes. */
export interface SweepClaims {
  /**
   * Claims a conversation found by a sweep or a notification, and reads its jobs when it is
   * ours; one claimed with nothing to run is marked idle, for a sweep to give up. One
   * this replica holds a ticket of is only read on from where it is.
   */
  take(key: string, channel: string): Promise<void>;
  /**
   * Settles a conversation whose job writes failed but may have been committed (see
   * `OwnedLanes.unsure`): claims it, and hands the queue those of the jobs that are stored.
   */
  settle(key: string): Promise<void>;
}

/** The sweep's claims of one replica. */
export function createSweepClaims(deps: SweepClaimsDeps): SweepClaims {
  const { replica, owned, loader, claim, notify, serial } = deps;
  const { idle, unplaced } = owned;

  /** Another replica runs it: tell it of the last stored job, should a notification have failed. */
  const tellOwner = async (key: string, answer: Claim): Promise<void> => {
    if (answer.previous === null || answer.previous === replica || answer.prev === 0) return;
    await notify({ owner: answer.previous, conversation: key, seq: answer.prev, id: answer.prevId });
  };

  const take = (key: string, channel: string): Promise<void> =>
    serial(key, async () => {
      if (deps.halted()) return;
      const held = owned.get(key);
      if (held !== undefined) {
        owned.foundWork(key, held, await owned.readOn(key, channel, held));
        unplaced.delete(key);
        return;
      }
      idle.delete(key);
      const answer = await claim({ conversation: key, channel, jobId: "", reclaim: true });
      if (!answer.mine && answer.previous !== null && !answer.previousLive) {
        // An owner whose lease ran out, which this replica may not take over yet: tried again.
        unplaced.set(key, channel);
        return;
      }
      if (!answer.mine) await tellOwner(key, answer);
      unplaced.delete(key);
      if (!answer.mine) return;
      const loaded = await owned.readOnOrIdle(key, channel, owned.own(key, answer));
      if (answer.previous !== null && answer.previous !== replica) owned.tookOver(answer.previous, loaded);
    });

  const settle = (key: string): Promise<void> =>
    serial(key, async () => {
      const unsure = owned.unsure.get(key);
      if (unsure === undefined || deps.halted() || performance.now() < unsure.after) return;
      const { channel, ids } = unsure;
      const held = owned.get(key);
      // A claim is a write: it goes through only once the database commits again, by when the
      // refused writes have settled one way or the other. A lane let go of meanwhile (its release
      // waited with them) is claimed again, as one this replica does not hold. The jobs are
      // forgotten only once the step succeeded: a failure leaves them for the next sweep.
      const answer = await claim({ conversation: key, channel, jobId: "", reclaim: held === undefined });
      if (!answer.mine) {
        owned.lost(key);
        await tellOwner(key, answer);
      } else {
        const lane = held !== undefined && held.epoch === answer.epoch ? held : owned.own(key, answer);
        if (lane !== held) await owned.readOnOrIdle(key, channel, lane);
        else if (!(await settleHeld(key, channel, lane, ids))) return;
      }
      owned.unsure.delete(key);
    });

  /**
   * Hands the queue the stored ones of `ids` in a lane held all along: first what follows what it
   * holds, in order, then by id what sits below it. False while jobs wait for room: the ids are
   * kept until they are all read, so that none is read ahead of those before it.
   */
  const settleHeld = async (key: string, channel: string, lane: OwnedLane, ids: Set<string>): Promise<boolean> => {
    let added = await owned.readOn(key, channel, lane);
    if (lane.behind) return false;
    added += await loader.byId(channel, lane, [...ids]);
    if (lane.behind) return false;
    owned.foundWork(key, lane, added);
    return true;
  };

  return { take, settle };
}
