import { ChannelError } from "../channel-error.js";
import type { ConversationTurn } from "../conversation/conversation-store.js";
import type { DeadLetter } from "../dead-letters/dead-letter.js";
import type { Job } from "./job.js";

/**
 * The right to write one conversation's lane: the lane's key (`conversationKey`) and the epoch of
 * the claim that gave it. A claim raises the epoch, so a runner that was cut off (paused past its
 * lease, a second process on the same state) holds an older one, and every write it makes is
 * refused in the statement that would make it.
 */
export interface LaneTicket {
  readonly key: string;
  readonly epoch: number;
}

/** What a job's write brings when its brain has just answered. */
export interface Answered {
  /** The message and the replies as conversation turns, kept in the write that keeps the replies. */
  readonly turns: readonly ConversationTurn[];
}

/** A write of a lane: done at once, or once a promise resolves; a rejection stored nothing. */
export type LaneWrite = void | Promise<void>;

/**
 * Where the lanes of accepted jobs are kept: each conversation's jobs in acceptance order, its
 * last reply `sequence`, and its conversation memory's newest turns. Memory, SQLite, Postgres and
 * the conversation Durable Object implement it; the core's lane runner (`runHead`) is its only
 * writer of a lane's head, so a backend stores and never decides: what an outcome means, how a
 * reply is numbered and when a job runs are the core's and the runtime's.
 *
 * Every write but `add` and `restore` carries a {@link LaneTicket} and takes effect only while the
 * ticket's epoch is the lane's, checked in the same statement (or transaction) as the write;
 * otherwise it is refused with {@link laneFencedError}. Methods answer at once or with a promise.
 */
export interface LaneStore {
  /**
   * Stores a newly accepted job at the end of its lane. A promise resolves once the job is
   * durable; undefined means it already is (or the store is not durable).
   */
  add(job: Job): Promise<void> | undefined;
  /** The lane's last reply number (0 before its first reply): the next reply takes the one after. */
  lastSequence(ticket: LaneTicket): number | Promise<number>;
  /**
   * Stores a running job's progress. With `answered` the job's replies are new, numbered from
   * `lastSequence + 1`: the lane's last number moves to their last and the turns join the
   * conversation memory in the same write, so a write that fails leaves no gap and no turn.
   */
  save(ticket: LaneTicket, job: Job, answered?: Answered): LaneWrite;
  /** The job is finished: it leaves its lane. */
  finish(ticket: LaneTicket, job: Job): LaneWrite;
  /** The job stays first in its lane with its progress, to run again at `dueAt` (epoch ms). */
  postpone(ticket: LaneTicket, job: Job, dueAt: number): LaneWrite;
  /** As {@link postpone}, waiting for its receiver: woken when it is up, or at `until` at the latest. */
  hold(ticket: LaneTicket, job: Job, until: number): LaneWrite;
  /** The job is dead: it leaves its lane and its letter is kept where dead letters are. */
  bury(ticket: LaneTicket, letter: DeadLetter): LaneWrite;
  /**
   * A replayed dead letter's job (`replayableJob`) is kept to join the end of its lane: it waits,
   * stored, until {@link takeReplayed} hands it to the runtime that runs the lane.
   */
  restore(job: Job): LaneWrite;
  /**
   * The replayed jobs waiting (oldest first), taken: at most `room(channel)` of each channel; the
   * rest wait for a later call. Two runtimes taking at once each get different jobs.
   */
  takeReplayed(room: (channel: string, wanted?: number) => number): readonly Job[] | Promise<readonly Job[]>;
}

/** Whether an error is a lane's refusal of a write under an older epoch. */
export function isLaneFenced(error: unknown): error is ChannelError {
  return error instanceof ChannelError && error.code === "lane_fenced";
}

/** The refusal of a write whose ticket's epoch is no longer the lane's. */
export function laneFencedError(key: string): ChannelError {
  return new ChannelError(
    "lane_fenced",
    `another runner claimed the conversation ${JSON.stringify(key)}: this run's write is refused and it stops`,
    { retryable: false },
  );
}
