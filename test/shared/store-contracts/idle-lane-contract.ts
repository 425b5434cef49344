/**
 * What every durable lane store does with a conversation idle past `IDLE_CONVERSATION_MS`
 * (SQLite and Postgres on Node; the conversation Durable Object expires whole, and the memory
 * mode bounds its counters by count): with nothing stored, its reply counter is forgotten and
 * its next reply is numbered 1; with a job stored, or active since the cutoff, it is kept.
 * Runtime-neutral: no `node:` or `cloudflare:` imports.
 */
import { describe, expect, it } from "vitest";
import type { LaneStoreHarness } from "./lane-store-contract.js";
import { answered, freshJob, keyOf, waitUntil } from "./lane-store-contract.js";

/** What a backend brings to the suite, besides its lane store harness. */
export interface IdleLaneHarness extends Pick<LaneStoreHarness, "store" | "ticket" | "lastSequenceElsewhere"> {
  /** The lane's stored jobs, oldest first. */
  jobs(key: string): Promise<readonly unknown[]>;
  /** The runner lets lane `key` go, as it does once the conversation is quiet. */
  letGo(key: string): Promise<void>;
  /** The backend's pass over idle conversations (`forgetIdleConversations`). */
  forgetIdle(cutoff: number): Promise<number>;
  /** Moves lane `key`'s last noted activity `ms` back, as if it had been noted that long ago. */
  age(key: string, ms: number): Promise<void>;
}

const DAY = 86_400_000;

// Later than every write of the test: everything the test wrote is idle at it.
const AFTER_THE_TEST = () => Date.now() + 60_000;

/** Registers the suite. */
export function idleLaneContract(name: string, make: () => Promise<IdleLaneHarness>): void {
  describe(`Idle conversations: ${name}`, () => {
    /** A conversation numbered up to `last`, its job finished and its lane let go. */
    async function numberedAndQuiet(h: IdleLaneHarness, last: number) {
      const job = freshJob();
      const key = keyOf(job);
      await h.store.add(job);
      const ticket = await h.ticket(key);
      await h.store.save(ticket, answered(job, 1, last), { turns: [] });
      await h.store.finish(ticket, job);
      await waitUntil(async () => (await h.jobs(key)).length === 0);
      await h.letGo(key);
      return { job, key };
    }

    it("forgets the counter of a conversation idle past the cutoff with no job stored: its next reply is 1", async () => {
      const h = await make();
      const { job, key } = await numberedAndQuiet(h, 3);
      expect(await h.forgetIdle(AFTER_THE_TEST())).toBeGreaterThanOrEqual(1);
      expect(await h.lastSequenceElsewhere(key)).toBe(0);
      const next = freshJob(job.message.channel, job.message.message.conversationId);
      await h.store.add(next);
      const ticket = await h.ticket(key);
      expect(await h.store.lastSequence(ticket)).toBe(0);
      // Numbered anew, and stored: the store wrote the counter again, though it had held 3.
      await h.store.save(ticket, answered(next, 1, 2), { turns: [] });
      expect(await h.store.lastSequence(ticket)).toBe(2);
      expect(await h.lastSequenceElsewhere(key)).toBe(2);
    });

    it("keeps the counter of a conversation active since the cutoff", async () => {
      const h = await make();
      const { key } = await numberedAndQuiet(h, 3);
      await h.forgetIdle(Date.now() - 60_000);
      expect(await h.lastSequenceElsewhere(key)).toBe(3);
    });

    it("counts the idle time from the end of a job that lasted long (a receiver down), not from its numbering", async () => {
      const h = await make();
      const fresh = freshJob();
      // Accepted two hours ago, held since by a receiver that was down.
      const job = { ...fresh, message: { ...fresh.message, receivedAt: Date.now() - 2 * 3_600_000 } };
      const key = keyOf(job);
      await h.store.add(job);
      const ticket = await h.ticket(key);
      await h.store.save(ticket, answered(job, 1, 2), { turns: [] });
      await h.store.hold(ticket, { ...answered(job, 1, 2), attempts: 1 }, Date.now() + 60_000);
      // As far as the store knows, the replies were numbered 40 days ago.
      await h.age(key, 40 * DAY);
      // Delivered now: the receiver has just seen sequence 2.
      await h.store.finish(ticket, { ...answered(job, 1, 2), delivered: 2 });
      await waitUntil(async () => (await h.jobs(key)).length === 0);
      await h.letGo(key);
      await h.forgetIdle(Date.now() - 30 * DAY);
      expect(await h.lastSequenceElsewhere(key)).toBe(2);
    });

    it("keeps the counter of a conversation with a job stored, however long ago it was numbered", async () => {
      const h = await make();
      const job = freshJob();
      const key = keyOf(job);
      await h.store.add(job);
      const ticket = await h.ticket(key);
      await h.store.save(ticket, answered(job, 1, 2), { turns: [] });
      // The reply waits (a receiver down): the job stays stored.
      await h.store.hold(ticket, { ...answered(job, 1, 2), attempts: 1 }, Date.now() + 60_000);
      await h.letGo(key);
      await h.forgetIdle(AFTER_THE_TEST());
      expect(await h.lastSequenceElsewhere(key)).toBe(2);
      expect(await h.jobs(key)).toHaveLength(1);
      expect(await h.store.lastSequence(await h.ticket(key))).toBe(2);
    });
  });
}
