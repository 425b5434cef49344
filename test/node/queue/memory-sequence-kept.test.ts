/**
 * In memory, a conversation's last reply number outlives its least recent use while a reply of
 * it still waits (a retry, a receiver outage): however many other conversations are answered
 * meanwhile, its next reply takes the next `sequence`, never 1 again.
 */
import { expect, it } from "vitest";
import type { Job, JobOutcome } from "../../../src/core/lifecycle/job.js";
import { createJobQueue } from "../../../src/node/queue/job-queue.js";
import { createLogSink } from "../../support/log-sink.js";
import { waitFor } from "../../support/wait-for.js";
import { message } from "./job-queue-harness.js";

/** More conversations than the memory mode remembers the numbers of when they are idle. */
const OTHERS = 100_001;

it("keeps the sequence of a conversation whose reply waits while more conversations than it remembers are answered", async () => {
  const { logger } = createLogSink("error");
  let blocked = false;
  const posted: { conversation: string; id: string; sequence: number }[] = [];
  const queue = createJobQueue({
    capacity: OTHERS + 10,
    logger,
    run: async (job, hooks): Promise<JobOutcome> => {
      let answered: Job = job;
      if (job.replies === undefined) {
        answered = { ...job, replies: [{ id: `r-${job.message.id}`, sequence: hooks.firstSequence, body: "{}" }] };
        await hooks.save(answered, { turns: [] });
      }
      const conversation = job.message.message.conversationId;
      // The receiver refuses conversation a's replies while blocked: its reply waits to be retried.
      if (conversation === "a" && blocked) return { kind: "retry", job: answered, delayMs: 5 };
      posted.push({ conversation, id: job.message.id, sequence: answered.replies?.[0]?.sequence ?? -1 });
      return { kind: "done", job: answered };
    },
  });
  await queue.enqueue(message("a1", "a"));
  await queue.enqueue(message("a2", "a"));
  await waitFor(() => (posted.length === 2 ? true : undefined), 5_000, "a's first two replies");
  blocked = true;
  await queue.enqueue(message("a3", "a"));
  await queue.enqueue(message("a4", "a"));
  for (let index = 0; index < OTHERS; index += 1) await queue.enqueue(message(`o${index}`, `other-${index}`));
  await waitFor(() => (posted.length === OTHERS + 2 ? true : undefined), 60_000, "every other conversation answered");
  blocked = false;
  await waitFor(() => (posted.length === OTHERS + 4 ? true : undefined), 5_000, "a's waiting replies");
  const ofA = posted.filter((reply) => reply.conversation === "a").map((reply) => `${reply.id}:${reply.sequence}`);
  expect(ofA).toEqual(["a1:1", "a2:2", "a3:3", "a4:4"]);
  expect(await queue.drain(1_000)).toEqual([]);
}, 90_000);
