import { ACTIVITY_NOTED_EVERY_MS, IDLE_CONVERSATION_MS } from "../../core/conversation/idle-conversation.js";
import type { ConversationCounters } from "./conversation-counters.js";
import type { ConversationLane } from "./conversation-lane.js";
import type { ConversationMemory } from "./conversation-memory.js";
import type { OldDeadLetters } from "./old-dead-letters.js";
import type { ParkedJobs } from "./parked-jobs.js";

/**
 * A conversation untouched this long is deleted whole (history, sequence counter, stored
 * jobs): the rule every engine follows ({@link IDLE_CONVERSATION_MS}), here for the whole object.
 */
export const CONVERSATION_TTL_MS = IDLE_CONVERSATION_MS;

/** `touched_at` is rewritten at most this often: the expiry needs no finer clock, and rows written are billed. */
const TOUCH_EVERY_MS = ACTIVITY_NOTED_EVERY_MS;

/** The parts of a conversation that its expiry notes activity in, or clears. */
export interface ExpiringParts {
  readonly counters: ConversationCounters;
  readonly memory: ConversationMemory;
  readonly parked: ParkedJobs;
  readonly lane: ConversationLane;
  readonly oldLetters: OldDeadLetters;
}

/**
 * When a conversation goes: {@link CONVERSATION_TTL_MS} after it was last active (`touched_at`
 * of its counters), and only while nothing waits in its lane. The object sets its one alarm to
 * {@link expiresAt} when the lane is empty, and calls {@link afterRun} at the end of each alarm.
 */
export class ConversationExpiry {
  constructor(private readonly parts: ExpiringParts) {}

  /** Notes activity at `now`, at most once per {@link TOUCH_EVERY_MS}. */
  touch(now: number): void {
    const touched = this.parts.counters.touchedAt();
    if (touched === undefined || now - touched >= TOUCH_EVERY_MS) this.parts.counters.touch(now);
  }

  /** When the conversation expires if nothing touches it; undefined before its first activity. */
  expiresAt(): number | undefined {
    const touched = this.parts.counters.touchedAt();
    return touched === undefined ? undefined : touched + CONVERSATION_TTL_MS;
  }

  /**
   * At the end of an alarm run: when the lane is empty, expires the conversation if its time
   * has come, or else prunes the lane's answered ids. `deleteStorage` deletes the object's whole
   * storage (tables and alarm) and recreates the tables, since the instance may still be called.
   */
  async afterRun(deleteStorage: () => Promise<void>): Promise<void> {
    const expiresAt = this.expiresAt();
    if (this.parts.lane.size() > 0) return;
    if (expiresAt !== undefined && expiresAt <= Date.now()) await this.expire(deleteStorage);
    else this.parts.lane.prune(Date.now(), (last) => this.parts.counters.keepSequence(last));
  }

  /**
   * Nothing touched the conversation for the TTL and nothing waits, so it goes, except dead
   * letters an earlier version kept here that could not be moved yet (and the sequence
   * counter, so numbering stays unique beside them).
   */
  private async expire(deleteStorage: () => Promise<void>): Promise<void> {
    const { memory, parked, lane, counters, oldLetters } = this.parts;
    if (oldLetters.count() > 0) {
      memory.clear();
      parked.clear();
      // The answered rows hold the last number: it is kept before they go.
      counters.keepSequence(lane.lastSequence());
      lane.clearAnswered();
      counters.clearAllButSequence();
      return;
    }
    await deleteStorage();
  }
}
