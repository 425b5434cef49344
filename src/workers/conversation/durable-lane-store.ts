import { errorMessage } from "../../core/channel-error.js";
import { ACTIVITY_NOTED_EVERY_MS, endNotesActivity } from "../../core/conversation/idle-conversation.js";
import type { DeadLetter } from "../../core/dead-letters/dead-letter.js";
import { lastTakenSequence } from "../../core/lifecycle/job.js";
import { type LaneStore, type LaneTicket, laneFencedError } from "../../core/lifecycle/lane-store.js";
import { jobKey } from "../../core/lifecycle/pending-job-store.js";
import type { Logger } from "../../core/log/logger.js";
import type { Metrics } from "../../core/metrics/metrics.js";
import { type DeadLetterBody, fitsInline } from "../queue-body.js";
import type { ConversationCounters } from "./conversation-counters.js";
import type { ConversationLane } from "./conversation-lane.js";
import type { ConversationMemory } from "./conversation-memory.js";
import type { ParkedJobs } from "./parked-jobs.js";

/** Wait before a dead letter the dead-letter queue refused is sent again. */
export const BLOCKED_RETRY_MS = 60_000;

/** What the lane store of a conversation object writes to, and where its dead letters go. */
export interface DurableLaneParts {
  readonly lane: ConversationLane;
  readonly counters: ConversationCounters;
  readonly memory: ConversationMemory;
  readonly parked: ParkedJobs;
  /** Producer of the dead-letter queue; asked when a letter is sent. */
  readonly deadLetters: () => Queue<unknown>;
  readonly logger: () => Logger;
  /** Counts dead letters as they are sent. */
  readonly metrics: () => Metrics;
  readonly now: () => number;
}

/** The lane store of one conversation object, with what the object does beside the runner. */
export interface DurableLaneStore extends LaneStore {
  /** The epoch of this instance's tickets. */
  readonly epoch: number;
  /** Another instance's runner takes the lane (the epoch rises); the lane store contract asks it. */
  takeOver(): number;
  /**
   * Sends the letter kept at the head to the dead-letter queue; once the queue has it, the job
   * leaves the lane. Refused, it stays first (nothing lost, order kept) and is sent again after
   * {@link BLOCKED_RETRY_MS}. True when sent.
   */
  sendLetter(id: string, letter: string, receivedAt: number): Promise<boolean>;
}

/**
 * The lane store of the conversation Durable Object, over its SQLite tables (the `lane` and
 * `answered` rows, the counters, the turns), all written in the object's one synchronous turn.
 * One instance of an object runs at a time, which the platform guarantees (a stale instance's
 * storage writes fail), so the epoch lives in memory: it is checked as every other backend
 * checks its own, and a contract test raises it. A dead letter goes to the dead-letter queue,
 * and the job leaves the lane once the queue has it; refused, the letter waits in the job's lane
 * row and is sent again.
 * Replays come back through the dead-letter store's hand-back straight into the lane, so none
 * waits here to be taken.
 */
export function createDurableLaneStore(parts: DurableLaneParts): DurableLaneStore {
  const { lane, counters, memory, now } = parts;
  let epoch = 1;

  const mine = (ticket: LaneTicket): void => {
    if (ticket.epoch !== epoch) throw laneFencedError(ticket.key);
  };

  // A job that lasted past the hour (a receiver down) notes its end as the conversation's
  // activity, as on Node: its expiry counts from the last reply, not from the hand-over.
  const ended = (receivedAt: number): void => {
    const at = now();
    if (!endNotesActivity(receivedAt, at)) return;
    const touched = counters.touchedAt();
    if (touched === undefined || at - touched >= ACTIVITY_NOTED_EVERY_MS) counters.touch(at);
  };

  const sendLetter = async (id: string, letter: string, receivedAt: number): Promise<boolean> => {
    try {
      await parts.deadLetters().send(JSON.parse(letter) as unknown, { contentType: "json" });
    } catch (error) {
      parts
        .logger()
        .error("the dead-letter queue refused a message: it stays first in its conversation and is sent again", {
          message_id: id,
          retry_in_ms: BLOCKED_RETRY_MS,
          error: errorMessage(error),
        });
      lane.holdLetter(id, letter, now() + BLOCKED_RETRY_MS);
      return false;
    }
    lane.finish(id);
    ended(receivedAt);
    return true;
  };

  /** The dead letter as the queue carries it (JSON); a job too large to carry is parked for the consumer. */
  const letterBody = (letter: DeadLetter): string => {
    const { job } = letter;
    const inline = fitsInline(job);
    if (!inline) parts.parked.park(job);
    const body: DeadLetterBody = { deadLetter: { ...letter, job: inline ? job : { stored: jobKey(job) } } };
    return JSON.stringify(body);
  };

  return {
    get epoch() {
      return epoch;
    },
    takeOver() {
      epoch += 1;
      return epoch;
    },
    add(job) {
      lane.add(job.message);
      return undefined;
    },
    lastSequence(ticket) {
      mine(ticket);
      return counters.lastSequence();
    },
    save(ticket, job, answered) {
      mine(ticket);
      lane.save(job);
      if (answered === undefined) return;
      if (answered.turns.length > 0) memory.append(answered.turns);
      counters.numbered(lastTakenSequence(job));
    },
    finish(ticket, job) {
      mine(ticket);
      lane.finish(job.message.id);
      ended(job.message.receivedAt);
    },
    postpone(ticket, job, dueAt) {
      mine(ticket);
      lane.save(job, dueAt);
    },
    hold(ticket, job, until) {
      mine(ticket);
      // Held for the receiver: the receiver object wakes the lane (`receiverWake`) before `until`.
      lane.save(job, until);
    },
    async bury(ticket, letter) {
      mine(ticket);
      // Sent first: a letter the queue refused is kept in its lane row (`sendLetter`), and one
      // sent by an instance that died before the job left the lane is sent again, which the
      // dead-letter store takes once.
      const { message } = letter.job;
      if (await sendLetter(message.id, letterBody(letter), message.receivedAt)) {
        parts.metrics().deadLetter(message.channel);
      }
    },
    restore(job) {
      const at = now();
      lane.restore(job, at, at);
    },
    takeReplayed: () => [],
    sendLetter,
  };
}
