import type { ConversationStore } from "../conversation/conversation-store.js";
import { conversationKey } from "../conversation/conversation-store.js";
import { LruMap } from "../lru-map.js";
import { type Job, lastTakenSequence } from "./job.js";
import { type LaneStore, type LaneTicket, laneFencedError } from "./lane-store.js";

/** The lane store of the memory mode, with the one claim a test can make of it. */
export interface MemoryLaneStore extends LaneStore {
  /** The epoch every ticket of this store carries. */
  readonly epoch: number;
  /**
   * Another runner takes every lane over (the epoch rises): tickets of the old epoch are refused
   * from now on. A process has one runner of its memory; the lane store contract asks this of
   * every backend.
   */
  takeOver(): number;
}

/** Idle conversations whose last reply number is remembered; beyond it the least recent start again at 1. */
const MAX_CONVERSATIONS = 100_000;

/**
 * The lane store of the memory mode (no `state_dir`): the job queue's lanes are the only copy of
 * the jobs, so a job's own writes keep nothing here, and the hot path pays for no second map of
 * every message. What is kept is what outlives a job: each lane's last reply number (bounded:
 * the least recently used idle conversations beyond {@link MAX_CONVERSATIONS} start again at 1), the
 * conversation turns (into `memory`, the store the brains read their history from) and the
 * replayed jobs waiting for their queue. Everything is lost when the process ends.
 */
export function createMemoryLaneStore(memory: ConversationStore): MemoryLaneStore {
  let epoch = 1;
  const last = new LruMap<number>();
  // Lanes with jobs accepted (or replayed) and not yet finished: their counters are never evicted.
  const busy = new Map<string, { jobs: number; last: number }>();
  let replayed: Job[] = [];
  const joined = (job: Job): void => {
    const key = conversationKey(job.message.channel, job.message.message.conversationId);
    const entry = busy.get(key);
    if (entry !== undefined) {
      entry.jobs += 1;
      return;
    }
    busy.set(key, { jobs: 1, last: last.get(key) ?? 0 });
    last.delete(key);
  };
  const left = (key: string): void => {
    const entry = busy.get(key);
    if (entry === undefined) return;
    entry.jobs -= 1;
    if (entry.jobs > 0) return;
    busy.delete(key);
    last.set(key, entry.last);
    last.trimTo(MAX_CONVERSATIONS);
  };

  const fence = (ticket: LaneTicket): void => {
    if (ticket.epoch !== epoch) throw laneFencedError(ticket.key);
  };

  return {
    get epoch() {
      return epoch;
    },
    takeOver() {
      epoch += 1;
      return epoch;
    },
    add: (job) => {
      joined(job);
      return undefined;
    },
    lastSequence(ticket) {
      fence(ticket);
      return busy.get(ticket.key)?.last ?? last.get(ticket.key) ?? 0;
    },
    save(ticket, job, answered) {
      fence(ticket);
      if (answered === undefined) return undefined;
      const entry = busy.get(ticket.key);
      if (entry !== undefined) entry.last = Math.max(entry.last, lastTakenSequence(job));
      else {
        last.set(ticket.key, Math.max(last.get(ticket.key) ?? 0, lastTakenSequence(job)));
        last.trimTo(MAX_CONVERSATIONS);
      }
      return answered.turns.length === 0 ? undefined : memory.append(ticket.key, answered.turns);
    },
    finish(ticket) {
      fence(ticket);
      left(ticket.key);
    },
    postpone: fence,
    hold: fence,
    bury(ticket) {
      fence(ticket);
      left(ticket.key);
    },
    restore(job) {
      joined(job);
      replayed.push(job);
    },
    takeReplayed(room) {
      if (replayed.length === 0) return [];
      const left = new Map<string, number>();
      const taken: Job[] = [];
      const waiting: Job[] = [];
      for (const job of replayed) {
        const { channel } = job.message;
        const free = left.get(channel) ?? room(channel);
        left.set(channel, Math.max(0, free - 1));
        (free >= 1 ? taken : waiting).push(job);
      }
      replayed = waiting;
      return taken;
    },
  };
}
