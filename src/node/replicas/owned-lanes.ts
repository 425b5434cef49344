import type { LaneTicket } from "../../core/lifecycle/lane-store.js";
import type { Logger } from "../../core/log/logger.js";
import type { PostgresLaneStore } from "../state/postgres/postgres-lane-store.js";
import type { LaneLoader, OwnedLane } from "./lane-loader.js";
import type { Claim } from "./lane-statements.js";

/**
 * What a replica knows of the conversations it runs: each one's ticket and how far its stored
 * jobs are held here, and the conversations waiting for a sweep (idle ones to give up, ones with
 * stored jobs waiting for room, ones whose claim failed), each with its channel.
 */
export class OwnedLanes {
  /** Owned conversations with no job here since their last one finished: given up at the next sweep. */
  readonly idle = new Map<string, string>();
  /** Owned conversations with stored jobs that wait for room in the queue. */
  readonly behind = new Map<string, string>();
  /** Conversations whose claim failed, or that a notification named while not owned: claimed at the next sweep. */
  readonly unplaced = new Map<string, string>();
  private readonly owned = new Map<string, OwnedLane>();
  /** Who this replica took conversations from since the last report, for the takeover line. */
  private readonly takenOver = new Map<string, { conversations: number; jobs: number }>();

  constructor(
    private readonly store: PostgresLaneStore,
    private readonly loader: LaneLoader,
  ) {}

  get(key: string): OwnedLane | undefined {
    return this.owned.get(key);
  }

  /** The ticket of lane `key`, or undefined when this replica does not run it. */
  ticket(key: string): LaneTicket | undefined {
    const lane = this.owned.get(key);
    return lane === undefined ? undefined : { key, epoch: lane.epoch };
  }

  /** Records the ticket a claim gave, and the lane's last number with it; nothing is held yet. */
  own(key: string, answer: Claim): OwnedLane {
    const lane: OwnedLane = { epoch: answer.epoch, upTo: 0, behind: false };
    this.owned.set(key, lane);
    this.store.primed({ key, epoch: answer.epoch }, answer.lastSequence);
    return lane;
  }

  /** Lane `key` is not this replica's (any more). */
  lost(key: string): void {
    this.owned.delete(key);
    this.idle.delete(key);
    this.behind.delete(key);
  }

  /** Forgets every lane: the lease ran out. */
  clear(): void {
    this.owned.clear();
    this.idle.clear();
    this.behind.clear();
  }

  /**
   * Reads what follows what lane `key` holds, within the queue's room (plus `reserved`), and
   * notes whether more waits. Returns how many jobs the queue took.
   */
  async readOn(key: string, channel: string, lane: OwnedLane, reserved = 0): Promise<number> {
    const added = await this.loader.after(key, channel, lane, reserved);
    this.noteBehind(key, channel, lane);
    return added;
  }

  /** Keeps {@link behind} in step with `lane`. */
  noteBehind(key: string, channel: string, lane: OwnedLane): void {
    if (lane.behind) this.behind.set(key, channel);
    else this.behind.delete(key);
  }

  /** A claim took a conversation from `from` (another replica), with `jobs` of its stored jobs read. */
  tookOver(from: string, jobs: number): void {
    const counts = this.takenOver.get(from) ?? { conversations: 0, jobs: 0 };
    this.takenOver.set(from, { conversations: counts.conversations + 1, jobs: counts.jobs + jobs });
  }

  /** Logs whom conversations were taken over from since the last call. */
  reportTakeovers(logger: Logger): void {
    for (const [from, counts] of this.takenOver) {
      logger.info("took over conversations of another replica", { from, ...counts });
    }
    this.takenOver.clear();
  }
}
