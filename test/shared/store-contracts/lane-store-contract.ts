/**
 * The behaviour every {@link LaneStore} shares, as one suite run against each implementation
 * (memory, SQLite and Postgres on Node, the conversation Durable Object inside workerd).
 * Runtime-neutral: no `node:` or `cloudflare:` imports.
 *
 * A harness gives the store, the ticket its runner holds for a lane, a way for another runner to
 * claim a lane (Postgres: another replica; SQLite: a second process opening the file; memory and
 * the Durable Object: a new instance's epoch), and what the backend lets a test read back.
 */
import { describe, expect, it } from "vitest";
import type { ConversationTurn } from "../../../src/core/conversation/conversation-store.js";
import { conversationKey } from "../../../src/core/conversation/conversation-store.js";
import type { DeadLetter } from "../../../src/core/dead-letters/dead-letter.js";
import { type Job, newJob } from "../../../src/core/lifecycle/job.js";
import { isLaneFenced, type LaneStore, type LaneTicket } from "../../../src/core/lifecycle/lane-store.js";

/** What a backend brings to the suite. */
export interface LaneStoreHarness {
  readonly store: LaneStore;
  /** The ticket this runner holds for lane `key` (a claim where the backend claims per lane). */
  ticket(key: string): Promise<LaneTicket>;
  /** Another runner claims lane `key`: the tickets this runner held for it are stale from now on. */
  claimElsewhere(key: string): Promise<void>;
  /** The lane's last number as the other runner reads it, once it claimed the lane. */
  lastSequenceElsewhere(key: string): Promise<number>;
  /** The conversation's turns as stored, oldest first. */
  turns(key: string): Promise<readonly ConversationTurn[]>;
  /** The lane's stored jobs, oldest first; absent where the backend keeps none (memory: the queue does). */
  readonly jobs?: (key: string) => Promise<readonly Job[]>;
  /** Where a replay waits: `inbox` (for `takeReplayed`) or straight in its `lane`. */
  readonly replays: "inbox" | "lane";
}

/** A job of a conversation no other test uses. */
export function freshJob(channel = "webhook", conversationId = `c-${crypto.randomUUID()}`): Job {
  return newJob({
    id: crypto.randomUUID(),
    channel,
    receivedAt: Date.now(),
    message: { senderId: "u1", conversationId, text: "hello" },
  });
}

/** The lane (conversation key) of `job`. */
export function keyOf(job: Job): string {
  return conversationKey(job.message.channel, job.message.message.conversationId);
}

/** The job once its brain answered with `count` replies numbered from `first`. */
export function answered(job: Job, first: number, count = 2): Job {
  const replies = Array.from({ length: count }, (_, index) => ({
    id: crypto.randomUUID(),
    sequence: first + index,
    body: JSON.stringify({ text: `reply ${index}`, sequence: first + index }),
  }));
  return { message: job.message, replies, delivered: 0, attempts: 0 };
}

function turnsOf(text: string): ConversationTurn[] {
  return [
    // Timed now: a turn older than the conversation memory's retention would not be read back.
    { role: "user", text, at: Date.now() },
    { role: "assistant", text: `re: ${text}`, at: Date.now() + 1 },
  ];
}

async function refused(write: () => unknown): Promise<void> {
  let error: unknown;
  try {
    await write();
  } catch (caught) {
    error = caught;
  }
  expect(isLaneFenced(error), `expected lane_fenced, got ${String(error)}`).toBe(true);
}

/**
 * Registers the suite. `keepsJobs` false (the memory mode, whose queue is the only copy of its
 * jobs) leaves out the case about stored jobs.
 */
export function laneStoreContract(
  name: string,
  make: () => Promise<LaneStoreHarness>,
  options: { readonly keepsJobs: boolean },
): void {
  describe(`LaneStore contract: ${name}`, () => {
    it("a lane that never numbered a reply has 0 as its last sequence", async () => {
      const h = await make();
      const job = freshJob();
      await h.store.add(job);
      expect(await h.store.lastSequence(await h.ticket(keyOf(job)))).toBe(0);
    });

    it("a save of new replies moves the last sequence to theirs and keeps their turns, in one write", async () => {
      const h = await make();
      const job = freshJob();
      const key = keyOf(job);
      await h.store.add(job);
      const ticket = await h.ticket(key);
      await h.store.save(ticket, answered(job, 1, 3), { turns: turnsOf("first") });
      expect(await h.store.lastSequence(ticket)).toBe(3);
      expect((await h.turns(key)).map((turn) => turn.text)).toEqual(["first", "re: first"]);
      const next = freshJob(job.message.channel, job.message.message.conversationId);
      await h.store.add(next);
      await h.store.save(ticket, answered(next, 4, 1), { turns: turnsOf("second") });
      expect(await h.store.lastSequence(ticket)).toBe(4);
    });

    it("a save of progress without new replies leaves the last sequence as it was", async () => {
      const h = await make();
      const job = freshJob();
      await h.store.add(job);
      const ticket = await h.ticket(keyOf(job));
      const withReplies = answered(job, 1, 2);
      await h.store.save(ticket, withReplies, { turns: [] });
      await h.store.save(ticket, { ...withReplies, delivered: 1 });
      await h.store.postpone(ticket, { ...withReplies, delivered: 1, attempts: 1 }, Date.now() + 60_000);
      expect(await h.store.lastSequence(ticket)).toBe(2);
    });

    it("a replay's renumbered replies set the last sequence, not the older numbers of those delivered before", async () => {
      // A dead letter replayed into a conversation forgotten since: its delivered reply keeps its
      // number (40), the undelivered one takes the conversation's next (1). The next reply is 2.
      const h = await make();
      const job = freshJob();
      await h.store.add(job);
      const ticket = await h.ticket(keyOf(job));
      const [kept, renumbered] = answered(job, 40, 2).replies ?? [];
      if (kept === undefined || renumbered === undefined) throw new Error("two replies expected");
      const replayed: Job = {
        message: job.message,
        replies: [kept, { ...renumbered, sequence: 1 }],
        delivered: 1,
        attempts: 0,
      };
      await h.store.save(ticket, replayed, { turns: [] });
      expect(await h.store.lastSequence(ticket)).toBe(1);
    });

    it("refuses every write under a ticket of an older epoch, and keeps nothing of it", async () => {
      const h = await make();
      const job = freshJob();
      const key = keyOf(job);
      await h.store.add(job);
      const stale = await h.ticket(key);
      await h.store.save(stale, answered(job, 1, 1), { turns: turnsOf("kept") });
      await h.claimElsewhere(key);
      const later = answered(job, 2, 2);
      await refused(() => h.store.save(stale, later, { turns: turnsOf("refused") }));
      await refused(() => h.store.save(stale, { ...later, delivered: 1 }));
      await refused(() => h.store.postpone(stale, later, Date.now() + 1_000));
      await refused(() => h.store.hold(stale, later, Date.now() + 1_000));
      await refused(() => h.store.finish(stale, later));
      const letter: DeadLetter = {
        job: later,
        error: { code: "delivery_failed", message: "refused", retryable: false, status: 400 },
        attempts: 1,
        diedAt: Date.now(),
      };
      await refused(() => h.store.bury(stale, letter));
      expect(await h.lastSequenceElsewhere(key)).toBe(1);
      expect((await h.turns(key)).map((turn) => turn.text)).toEqual(["kept", "re: kept"]);
      if (h.jobs !== undefined)
        expect((await h.jobs(key)).map((stored) => stored.message.id)).toEqual([job.message.id]);
    });

    it("a replayed job waits to be taken, at most the room of its channel each time, oldest first", async () => {
      const h = await make();
      const channel = `replays-${crypto.randomUUID().slice(0, 8)}`;
      const jobs = [freshJob(channel), freshJob(channel), freshJob(channel)];
      for (const job of jobs) await h.store.restore({ ...job, attempts: 0 });
      if (h.replays === "lane") {
        for (const job of jobs) {
          expect((await h.jobs?.(keyOf(job)))?.map((stored) => stored.message.id)).toEqual([job.message.id]);
        }
        return;
      }
      const room = (asked: string): number => (asked === channel ? 2 : 0);
      const first = await h.store.takeReplayed(room);
      expect(first.map((job) => job.message.id)).toEqual(jobs.slice(0, 2).map((job) => job.message.id));
      const second = await h.store.takeReplayed(room);
      expect(second.map((job) => job.message.id)).toEqual([jobs[2]?.message.id]);
      expect(await h.store.takeReplayed(room)).toEqual([]);
    });

    if (!options.keepsJobs) return;
    it("keeps the lane's jobs in acceptance order until they are finished or buried", async () => {
      const h = await make();
      const { jobs } = h;
      if (jobs === undefined) throw new Error("a store that keeps jobs lets the suite read them");
      const first = freshJob();
      const second = freshJob(first.message.channel, first.message.message.conversationId);
      const third = freshJob(first.message.channel, first.message.message.conversationId);
      const key = keyOf(first);
      for (const job of [first, second, third]) await h.store.add(job);
      expect((await jobs(key)).map((job) => job.message.id)).toEqual(
        [first, second, third].map((job) => job.message.id),
      );
      const ticket = await h.ticket(key);
      await h.store.save(ticket, answered(first, 1, 1), { turns: [] });
      expect((await jobs(key))[0]?.replies?.[0]?.sequence).toBe(1);
      await h.store.finish(ticket, first);
      await h.store.bury(ticket, {
        job: second,
        error: { code: "brain_failed", message: "gave up", retryable: false },
        attempts: 1,
        diedAt: Date.now(),
      });
      await waitUntil(async () => (await jobs(key)).length === 1);
      expect((await jobs(key)).map((job) => job.message.id)).toEqual([third.message.id]);
    });
  });
}

/** Polls `check` until it holds: a finish may ride on a later write. */
export async function waitUntil(check: () => Promise<boolean>, timeoutMs = 5_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error("timed out waiting for the store");
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
