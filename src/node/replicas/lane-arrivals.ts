import { channelOfKey, conversationKey } from "../../core/conversation/conversation-store.js";
import type { Job } from "../../core/lifecycle/job.js";
import type { LanePlace } from "../queue/lane-ownership.js";
import type { AddedPosition } from "../state/postgres/added-positions.js";
import type { JobNotice } from "../state/postgres/job-notices.js";
import type { LaneBatches } from "./lane-batches.js";
import type { LaneLoader, OwnedLane } from "./lane-loader.js";
import type { Claim } from "./lane-statements.js";
import type { OwnedLanes } from "./owned-lanes.js";

/** What {@link createLaneArrivals} works with (see `replica-lanes.ts`). */
export interface LaneArrivalsDeps {
  readonly owned: OwnedLanes;
  readonly loader: LaneLoader;
  readonly claim: LaneBatches["claim"];
  readonly notify: LaneBatches["notify"];
  /** Runs `step` after every step of conversation `key` under way, one at a time. */
  readonly serial: <T>(key: string, step: () => Promise<T>) => Promise<T>;
  readonly isStopped: () => boolean;
  /** This replica's id: the owner a lane row names when the lane is held here. */
  readonly replica: string;
  /** Where the committed add of job `id` put it, once (see `PostgresLaneStore.takePosition`). */
  readonly position: (id: string) => AddedPosition | undefined;
}

/** How a stored job reaches the replica that runs its conversation. */
export interface LaneArrivals {
  /** Another replica stored a job of a conversation this one runs (or ran): read it. */
  noticed(notice: JobNotice | { readonly conversation: string }): Promise<void>;
  /** This replica stored `job`: where it runs (see `LaneOwnership.place`). */
  place(job: Job): Promise<LanePlace>;
}

/**
 * A replica's arrivals: a job it stored in a conversation it runs joins its lane from what the
 * add read of the lane; one in a conversation another live replica runs was told to it by the
 * add; any other claims the conversation when nobody runs it (or tells the live owner where the
 * job is); a notice of a job another replica stored makes the owner read
 * what follows what it holds.
 */
export function createLaneArrivals(deps: LaneArrivalsDeps): LaneArrivals {
  const { owned, loader, claim, notify, serial } = deps;
  const { idle, unplaced } = owned;

  const noticed = (notice: JobNotice | { readonly conversation: string }): Promise<void> => {
    const key = notice.conversation;
    const channel = channelOfKey(key);
    if (channel === undefined || deps.isStopped()) return Promise.resolve();
    return serial(key, async () => {
      const lane = owned.get(key);
      if (lane === undefined) {
        unplaced.set(key, channel);
        return;
      }
      // At or below what the lane holds: a job whose commit came after a later one's.
      const added =
        "seq" in notice && notice.seq <= lane.upTo
          ? await loader.byId(channel, lane, [notice.id])
          : await owned.readOn(key, channel, lane);
      owned.noteBehind(key, channel, lane);
      // A notice of a job known here already (finished, its delete to come) leaves it idle.
      owned.foundWork(key, lane, added);
    });
  };

  /**
   * Adds the job at `position` to `lane`, held here: it joins the end when everything before it
   * is held here (or finished here, its delete to come); else the jobs stored before it (by other
   * replicas, or before a takeover) are read first, it included.
   */
  const join = async (
    key: string,
    channel: string,
    lane: OwnedLane,
    position: Pick<Claim, "seq" | "prev" | "prevId">,
  ): Promise<LanePlace> => {
    const known = position.prevId !== "" && loader.queueOf(channel)?.knows(position.prevId) === true;
    if (!lane.behind && (position.prev <= lane.upTo || known)) {
      lane.upTo = Math.max(lane.upTo, position.seq);
      return "here";
    }
    await owned.readOn(key, channel, lane, 1);
    return "loaded";
  };

  /**
   * Adds the job at `seq` to `lane`, held here, when what the add read of the jobs before it may
   * be stale: a job another statement stored while the add waited for the lane's lock may come
   * before this one, and reading on finds both, in order. One that a read (of a job stored after
   * it) passed already joins the end: those were accepted at once, and a job the queue holds or
   * finished lately is not added twice.
   */
  const readOnTo = async (key: string, channel: string, lane: OwnedLane, seq: number): Promise<LanePlace> => {
    if (seq <= lane.upTo) return "here";
    await owned.readOn(key, channel, lane, 1);
    return "loaded";
  };

  const place = (job: Job): Promise<LanePlace> => {
    const { channel } = job.message;
    const key = conversationKey(channel, job.message.message.conversationId);
    return serial(key, async (): Promise<LanePlace> => {
      idle.delete(key);
      const held = owned.get(key);
      // Read by the add itself under the lane's lock: a lane held here under that claim needs no
      // claim of its own (one by another replica after the add waited for its commit, then read the job).
      const position = deps.position(job.message.id);
      if (held !== undefined && position?.owner === deps.replica && position.epoch === held.epoch) {
        if (position.exact) return join(key, channel, held, position);
        return readOnTo(key, channel, held, position.seq);
      }
      // Claimed here after the add's commit (the claim waited for the row's lock, which the add
      // held), under a newer epoch than the add saw: the lane is this replica's, whatever the
      // add told the owner it named.
      if (held !== undefined && position !== undefined && position.owner !== null && position.epoch < held.epoch) {
        return readOnTo(key, channel, held, position.seq);
      }
      // The add told the live owner, another replica, as a claim and a notice would have.
      if (position?.told === true) {
        owned.lost(key);
        return "elsewhere";
      }
      let answer: Claim;
      try {
        answer = await claim({ conversation: key, channel, jobId: job.message.id, reclaim: held === undefined });
      } catch (error) {
        // Stored: claimed again at the next sweep, here, or by another replica should this one die.
        unplaced.set(key, channel);
        throw error;
      }
      if (!answer.mine) {
        owned.lost(key);
        // Its owner's lease ran out, and this replica may not take over yet: a sweep claims it once
        // it may (told, the dead owner would never run it, and nothing else would find the job).
        if (answer.previous !== null && !answer.previousLive) unplaced.set(key, channel);
        else if (answer.previous !== null) {
          await notify({ owner: answer.previous, conversation: key, seq: answer.seq, id: job.message.id }).catch(
            (error: unknown) => {
              unplaced.set(key, channel); // told again from the next sweep's claim
              throw error;
            },
          );
        }
        return "elsewhere";
      }
      const current = owned.get(key);
      return join(
        key,
        channel,
        current !== undefined && current.epoch === answer.epoch ? current : owned.own(key, answer),
        answer,
      );
    });
  };

  return { noticed, place };
}
