/**
 * A conversation's job too long for one Durable Object value, through an instance that stops
 * with it under way: the next instance takes its progress back (`adoptOpen`), runs it from its
 * pieces with the conversation's last `sequence` intact, and leaves no piece once it ends.
 * Inside workerd, on the object's own SQLite.
 */
import { runInDurableObject } from "cloudflare:test";
import { afterEach, expect, it } from "vitest";
import type { Job } from "../../src/core/lifecycle/job.js";
import { AnsweredIds } from "../../src/workers/conversation/answered-ids.js";
import { ConversationLane } from "../../src/workers/conversation/conversation-lane.js";
import { createConversationTables } from "../../src/workers/conversation/conversation-tables.js";
import { ParkedJobs } from "../../src/workers/conversation/parked-jobs.js";
import { MeteredSql } from "../../src/workers/metered-sql.js";
import { conversation, forgetConversations } from "./support/conversations.js";
import { queuedMessage } from "./support/queue-messages.js";
import { freshConversation } from "./support/test-config.js";

afterEach(async () => {
  await forgetConversations();
});

it("takes back a long job's progress after a stop, runs it whole, keeps its last sequence, and forgets its pieces", async () => {
  const seen = await runInDurableObject(conversation(freshConversation()), (_instance, state) => {
    const sql = new MeteredSql(state.storage.sql);
    createConversationTables(sql);
    const instance = () => new ConversationLane(sql, new ParkedJobs(sql), new AnsweredIds(sql), 0);
    const queued = queuedMessage({ conversationId: "c", text: "tell me everything" });
    const body = JSON.stringify({ text: "é".repeat(1_000_000) });
    const job: Job = {
      message: queued,
      delivered: 0,
      attempts: 0,
      replies: [
        { id: "r1", sequence: 7, body },
        { id: "r2", sequence: 8, body },
      ],
    };
    const first = instance();
    expect(first.add(queued, true)).toBe("queued");
    // Its replies are saved while it runs alone, unstored: the open `answered` row holds it.
    first.save(job);
    const pieces = () => sql.first<{ n: number }>("SELECT COUNT(*) AS n FROM job_pieces")?.n ?? 0;
    const written = pieces();

    // The instance stops; the next one takes the job back from its progress.
    const next = instance();
    next.adoptOpen();
    const head = next.head();
    const lastSequence = next.lastSequence();
    if (head === undefined) throw new Error("nothing at the head after the restart");
    next.finish(head.id);
    const replies = head.job?.replies?.map((reply) => [reply.id, reply.sequence, reply.body === body]);
    return { written, replies, lastSequence, left: pieces(), size: next.size() };
  });
  expect(seen.written).toBeGreaterThan(1);
  expect(seen.replies).toEqual([
    ["r1", 7, true],
    ["r2", 8, true],
  ]);
  expect(seen).toMatchObject({ lastSequence: 8, left: 0, size: 0 });
});
