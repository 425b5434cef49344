/**
 * The behaviour every {@link PendingJobStore} shares, as one suite run against each
 * implementation (memory, SQLite, the Durable Object). Runtime-neutral: no `node:` or
 * `cloudflare:` imports, so it runs on Node and inside workerd alike.
 *
 * Methods may answer at once or with a promise; the suite awaits every one. Where dead
 * letters go afterwards is each implementation's own business, so `bury` is only held to
 * removing the job.
 */
import { describe, expect, it } from "vitest";
import type { DeadLetter } from "../../../src/core/dead-letters/dead-letter.js";
import type { Job } from "../../../src/core/lifecycle/job.js";
import { jobKey, type PendingJobStore } from "../../../src/core/lifecycle/pending-job-store.js";
import type { QueuedMessage } from "../../../src/core/message/inbound-message.js";

/** A freshly accepted job with ids no other test uses, so durable state never interferes. */
function freshJob(fields: { channel?: string; conversationId?: string; text?: string } = {}): Job {
  const conversationId = fields.conversationId ?? `conversation-${crypto.randomUUID()}`;
  const message: QueuedMessage = {
    id: crypto.randomUUID(),
    channel: fields.channel ?? "webhook",
    receivedAt: Date.now(),
    message: { senderId: "u1", conversationId, text: fields.text ?? "hello" },
  };
  return { message, delivered: 0, attempts: 0 };
}

/** The job after the brain answered and a delivery failed: every optional field set. */
function progressed(job: Job): Job {
  return {
    ...job,
    replies: [
      { id: crypto.randomUUID(), sequence: 1, body: '{"text":"first"}' },
      { id: crypto.randomUUID(), sequence: 2, body: '{"text":"second"}' },
    ],
    delivered: 1,
    attempts: 2,
    stepStartedAt: job.message.receivedAt + 1_000,
    lastError: { code: "upstream_error", message: "receiver answered 503", retryable: true, status: 503 },
  };
}

export function pendingJobStoreContract(name: string, make: () => Promise<PendingJobStore> | PendingJobStore): void {
  describe(`PendingJobStore contract: ${name}`, () => {
    it("a job never added reads as undefined", async () => {
      const store = await make();
      expect(await store.get(jobKey(freshJob()))).toBeUndefined();
    });

    it("a job added can be read back", async () => {
      const store = await make();
      const job = freshJob();
      await store.add(job);
      expect(await store.get(jobKey(job))).toEqual(job);
    });

    it("keeps every field of a job", async () => {
      const store = await make();
      const base = freshJob();
      const job: Job = progressed({
        ...base,
        message: {
          ...base.message,
          idempotencyKey: `key-${crypto.randomUUID()}`,
          message: {
            senderId: "u2",
            senderName: "Ada",
            text: "look",
            mediaUrl: "https://media.example/cat.png",
            mediaType: "image/png",
            conversationId: base.message.message.conversationId,
          },
        },
      });
      await store.add(job);
      expect(await store.get(jobKey(job))).toEqual(job);
    });

    it("jobs added together are all stored", async () => {
      const store = await make();
      const conversationId = `conversation-${crypto.randomUUID()}`;
      const jobs = [freshJob({ conversationId }), freshJob({ conversationId }), freshJob()];
      await Promise.all(jobs.map((job) => store.add(job)));
      for (const job of jobs) expect(await store.get(jobKey(job))).toEqual(job);
    });

    it("update replaces a stored job", async () => {
      const store = await make();
      const job = freshJob();
      await store.add(job);
      const updated = progressed(job);
      await store.update(updated);
      expect(await store.get(jobKey(job))).toEqual(updated);
      const delivered: Job = { ...updated, delivered: 2, attempts: 0 };
      await store.update(delivered);
      expect(await store.get(jobKey(job))).toEqual(delivered);
    });

    it("adding a job that is already stored replaces it, without failing the jobs added with it", async () => {
      const store = await make();
      const job = freshJob();
      const other = freshJob();
      await store.add(job);
      const again = progressed(job);
      await Promise.all([store.add(again), store.add(other)]);
      expect(await store.get(jobKey(job))).toEqual(again);
      expect(await store.get(jobKey(other))).toEqual(other);
    });

    it("remove forgets a job", async () => {
      const store = await make();
      const job = freshJob();
      await store.add(job);
      await store.remove(jobKey(job));
      expect(await store.get(jobKey(job))).toBeUndefined();
    });

    it("bury removes the job", async () => {
      const store = await make();
      const job = progressed(freshJob());
      await store.add(job);
      const letter: DeadLetter = {
        job,
        error: { code: "upstream_rejected", message: "receiver answered 400", retryable: false, status: 400 },
        attempts: 3,
        diedAt: Date.now(),
      };
      await store.bury(letter);
      expect(await store.get(jobKey(job))).toBeUndefined();
    });

    it("keeps jobs apart, within a conversation and across conversations", async () => {
      const store = await make();
      const conversationId = `conversation-${crypto.randomUUID()}`;
      const [removed, updated, neighbour, elsewhere] = [
        freshJob({ conversationId, text: "removed" }),
        freshJob({ conversationId, text: "updated" }),
        freshJob({ conversationId, text: "neighbour" }),
        freshJob({ text: "elsewhere" }),
      ];
      for (const job of [removed, updated, neighbour, elsewhere]) await store.add(job);
      await store.remove(jobKey(removed));
      const progress = progressed(updated);
      await store.update(progress);
      expect(await store.get(jobKey(removed))).toBeUndefined();
      expect(await store.get(jobKey(updated))).toEqual(progress);
      expect(await store.get(jobKey(neighbour))).toEqual(neighbour);
      expect(await store.get(jobKey(elsewhere))).toEqual(elsewhere);
    });

    it("keeps jobs of different channels apart", async () => {
      const store = await make();
      const conversationId = `conversation-${crypto.randomUUID()}`;
      const first = freshJob({ channel: `channel-${crypto.randomUUID()}`, conversationId });
      const second = freshJob({ channel: `channel-${crypto.randomUUID()}`, conversationId });
      await store.add(first);
      await store.add(second);
      await store.bury({
        job: first,
        error: { code: "upstream_rejected", message: "no", retryable: false },
        attempts: 1,
        diedAt: Date.now(),
      });
      expect(await store.get(jobKey(first))).toBeUndefined();
      expect(await store.get(jobKey(second))).toEqual(second);
    });
  });
}
