import type { LaneTicket } from "../../core/lifecycle/lane-store.js";
import type { Logger } from "../../core/log/logger.js";
import type { PostgresLaneStore } from "../state/postgres/postgres-lane-store.js";
import type { LaneLoader, OwnedLane } from "./lane-loader.js";
import type { Claim, Release } from "./lane-statements.js";

/** An owned conversation with nothing to run here: its channel, and since when (`performance.now()`). */
export interface IdleLane {
  readonly channel: string;
  readonly since: number;
}

/**
 * What a replica knows of the conversations it runs: each one's ticket and how far its stored
 * jobs are held here, and the conversations waiting for a sweep (idle ones to give up, ones with
 * stored jobs waiting for room, ones to claim), each with its channel. Its steps for one
 * conversation run in that conversation's chain (see `replica-lanes.ts`).
 */
export class OwnedLanes {
  /**
   * Owned conversations with no job here (their last one finished, or a claim found none), each
   * with its channel and since when: given up by a sweep once idle for a while (see `replica-sweep.ts`).
   */
  readonly idle = new Map<string, IdleLane>();
  /** Owned conversations with stored jobs that wait for room in the queue. */
  readonly behind = new Map<string, string>();
  /** Conversations whose claim failed, or that a notification named while not owned: claimed at the next sweep. */
  readonly unplaced = new Map<string, string>();
  /**
   * Conversations with jobs whose write failed but may have been committed (an answer that came
   * too late, a connection that broke at the commit), each with its channel and those jobs' ids:
   * settled by the next sweep that can claim them, which runs those that are stored.
   */
  readonly unsure = new Map<string, UnsureJobs>();
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

  /** Marks lane `key` idle from now on (see {@link idle}). */
  markIdle(key: string, channel: string): void {
    this.idle.set(key, { channel, since: performance.now() });
  }

  /**
   * A step read `added` jobs into lane `key`: an idle lane stays marked unless that found work (or
   * left some waiting for room), since nothing else would give it up.
   */
  foundWork(key: string, lane: OwnedLane, added: number): void {
    if (added > 0 || lane.behind) this.idle.delete(key);
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

  /** {@link readOn} of lane `key` when this replica holds it. */
  async readOnHeld(key: string, channel: string): Promise<void> {
    const lane = this.owned.get(key);
    if (lane !== undefined) await this.readOn(key, channel, lane);
  }

  /** Hands the queue the stored jobs `ids` of lane `key`, when this replica holds it. */
  async readIds(key: string, channel: string, ids: readonly string[]): Promise<void> {
    const lane = this.owned.get(key);
    if (lane === undefined) return;
    await this.loader.byId(channel, lane, ids);
    // Left for the lane's read from its start: the sweep makes it.
    this.noteBehind(key, channel, lane);
  }

  /**
   * {@link readOn}, and when that leaves the lane with nothing held here and nothing waiting, marks
   * it {@link idle}, for a sweep to give up: a claimed conversation with no job to run is not
   * kept.
   */
  async readOnOrIdle(key: string, channel: string, lane: OwnedLane): Promise<number> {
    const added = await this.readOn(key, channel, lane);
    // A channel no longer configured has no queue to read into: its lane stays as it is.
    if (added === 0 && !lane.behind && this.loader.hasQueue(channel)) this.markIdle(key, channel);
    return added;
  }

  /**
   * Gives up idle lane `key` when idle since before `idleBefore` (`release` writes it; "kept"
   * when a job was stored meanwhile, which this replica may not have been told of yet: it is read
   * on instead). A lane that ran a job since the sweep chose it is kept. A release that fails
   * leaves the lane idle, for the next sweep to try again. Runs in the conversation's chain.
   */
  async giveUp(
    key: string,
    channel: string,
    release: (key: string) => Promise<Release>,
    idleBefore: number,
  ): Promise<void> {
    const mark = this.idle.get(key);
    if (mark === undefined || mark.since > idleBefore) return;
    this.idle.delete(key);
    let answer: Release;
    try {
      answer = await release(key);
    } catch (error) {
      // Idle as long as before: the next sweep tries again.
      this.idle.set(key, mark);
      throw error;
    }
    const lane = this.owned.get(key);
    if (answer !== "kept" || lane === undefined) {
      this.lost(key);
      return;
    }
    await this.readOnOrIdle(key, channel, lane);
  }

  /**
   * Job `id` of conversation `key` may be stored though its write failed (see {@link unsure});
   * `after` (a monotonic time) is when a write still under way for it would have ended.
   */
  noteUnsure(key: string, channel: string, id: string, after: number): void {
    const known = this.unsure.get(key);
    if (known === undefined) this.unsure.set(key, { channel, ids: new Set([id]), after });
    else {
      known.ids.add(id);
      known.after = Math.max(known.after, after);
    }
  }

  /**
   * Lane `key` holds nothing in the queue any more and is to be read from its start: it is marked
   * behind, so that a job placed before that read is read with those stored before it, in order,
   * and a read that fails is made by the next sweep. False when this replica does not hold it.
   */
  startOver(key: string, channel: string): boolean {
    const lane = this.owned.get(key);
    if (lane === undefined) return false;
    lane.upTo = 0;
    lane.behind = true;
    this.noteBehind(key, channel, lane);
    return true;
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

/** The jobs of one conversation whose write failed but may have been committed. */
export interface UnsureJobs {
  readonly channel: string;
  readonly ids: Set<string>;
  /** Monotonic time from which a write for them can no longer be under way: settled from then on. */
  after: number;
}
