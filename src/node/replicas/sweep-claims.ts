import type { LaneLoader } from "./lane-loader.js";
import type { Claim, ClaimRequest, JobNotice } from "./lane-statements.js";
import type { OwnedLanes } from "./owned-lanes.js";

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
   * ours; one claimed with nothing to run is marked idle, for the next sweep to give up. One
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
        // An idle lane stays marked unless this finds work: nothing else would give it up.
        if ((await owned.readOn(key, channel, held)) > 0 || held.behind) idle.delete(key);
        unplaced.delete(key);
        return;
      }
      idle.delete(key);
      const answer = await claim({ conversation: key, channel, jobId: "", reclaim: true });
      if (!answer.mine) await tellOwner(key, answer);
      unplaced.delete(key);
      if (!answer.mine) return;
      const loaded = await owned.readOnOrIdle(key, channel, owned.own(key, answer));
      if (answer.previous !== null && answer.previous !== replica) owned.tookOver(answer.previous, loaded);
    });

  const settle = (key: string): Promise<void> =>
    serial(key, async () => {
      const unsure = owned.unsure.get(key);
      if (unsure === undefined || deps.halted()) return;
      const { channel, ids } = unsure;
      const held = owned.get(key);
      // A claim is a write: it goes through only once the database commits again, by when the
      // refused writes have settled one way or the other. A lane let go of meanwhile (its release
      // waited with them) is claimed again, as one this replica does not hold.
      const answer = await claim({ conversation: key, channel, jobId: "", reclaim: held === undefined });
      owned.unsure.delete(key);
      if (!answer.mine) {
        owned.lost(key);
        await tellOwner(key, answer);
        return;
      }
      const lane = held !== undefined && held.epoch === answer.epoch ? held : owned.own(key, answer);
      if (lane !== held) {
        await owned.readOnOrIdle(key, channel, lane);
        return;
      }
      // Held all along: its jobs may sit below what it holds, so they are read by id.
      if ((await loader.byId(channel, lane, [...ids])) > 0 || lane.behind) idle.delete(key);
      owned.noteBehind(key, channel, lane);
    });

  return { take, settle };
}
