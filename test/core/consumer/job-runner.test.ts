// The job runner's way through a message: one brain step, then each reply delivered in order;
// a resumed or replayed job picks up where it stopped. Failures and retries are in
// job-runner-retries.test.ts, the steps it saves in job-runner-saves.test.ts.

import { describe, expect, it } from "vitest";
import { conversationKey } from "../../../src/core/conversation/conversation-store.js";
import { replayableJob } from "../../../src/core/dead-letters/dead-letter.js";
import { type Job, newJob } from "../../../src/core/lifecycle/job.js";
import { expectKind, OUTBOUND_URL, queued, setup, T0, textsOf } from "./job-runner-harness.js";

describe("job runner", () => {
  it("gives a replayed job's undelivered replies the conversation's next sequence numbers, keeping their ids and the delivered one", async () => {
    const { run, brain, poster } = await setup({ answers: [200, 400, 200] });
    const dead = expectKind(await run(newJob(queued("one|two|three"))), "dead");
    // Another message of the conversation was answered meanwhile: it took 4.
    const other = expectKind(await run(newJob({ ...queued("between"), id: "msg-2" })), "done");
    expect(other.job.replies?.map((reply) => reply.sequence)).toEqual([4]);

    const replayed = replayableJob({ job: dead.job, error: dead.error, attempts: 1, diedAt: T0 });
    const outcome = expectKind(await run(replayed), "done");

    expect(brain.calls).toBe(2);
    const again = poster.posted.slice(3);
    expect(again.map((post) => [post.headers["webhook-id"], post.body.text, post.body.sequence])).toEqual([
      ["reply-2", "two", 5],
      ["reply-3", "three", 6],
    ]);
    expect(outcome.job.renumber).toBeUndefined();
    expect(outcome.job.replies?.map((reply) => [reply.id, reply.sequence])).toEqual([
      ["reply-1", 1],
      ["reply-2", 5],
      ["reply-3", 6],
    ]);
  });

  it("saves the new numbers before posting, so a replay that fails again keeps them", async () => {
    const { run } = await setup({ answers: [400, 503] });
    const dead = expectKind(await run(newJob(queued("one"))), "dead");
    const saved: Job[] = [];
    const retry = expectKind(
      await run(replayableJob({ job: dead.job, error: dead.error, attempts: 1, diedAt: T0 }), (job) => {
        saved.push(job);
      }),
      "retry",
    );
    expect(saved[0]?.replies?.[0]?.sequence).toBe(2);
    expect(saved[0]?.renumber).toBeUndefined();
    expect(retry.job.replies?.[0]?.sequence).toBe(2);
  });

  it("asks the brain once, then delivers every reply in order and returns done", async () => {
    const { run, brain, poster } = await setup();
    const outcome = expectKind(await run(newJob(queued("one|two|three"))), "done");

    expect(brain.calls).toBe(1);
    expect(textsOf(poster.posted)).toEqual(["one", "two", "three"]);
    expect(poster.posted.map((post) => post.body.sequence)).toEqual([1, 2, 3]);
    expect(poster.posted.every((post) => post.url === OUTBOUND_URL)).toBe(true);
    expect(poster.posted.map((post) => post.headers["webhook-id"])).toEqual(["reply-1", "reply-2", "reply-3"]);
    expect(poster.posted[0]?.headers["webhook-timestamp"]).toBe(String(Math.floor(T0 / 1000)));
    expect(poster.posted[0]?.body).toMatchObject({
      message_id: "reply-1",
      in_reply_to: "msg-1",
      conversation_id: "conv-1",
      recipient_id: "user-1",
      brain: "echo",
    });
    expect(outcome.job).toMatchObject({ delivered: 3, attempts: 0 });
    expect(outcome.job.replies?.map((reply) => reply.id)).toEqual(["reply-1", "reply-2", "reply-3"]);
  });

  it("resumes a job that already holds replies at `delivered` without asking the brain again", async () => {
    const { run, brain, poster, store } = await setup({ answers: [200, 503, 200] });
    const first = expectKind(await run(newJob(queued("one|two|three"))), "retry");
    expect(first.job.delivered).toBe(1);

    const second = expectKind(await run(first.job), "done");

    expect(brain.calls).toBe(1);
    expect(textsOf(poster.posted)).toEqual(["one", "two", "two", "three"]);
    // The retried reply is the same rendered reply: same id, same bytes.
    expect(poster.posted[2]?.headers["webhook-id"]).toBe(poster.posted[1]?.headers["webhook-id"]);
    expect(poster.posted[2]?.body).toEqual(poster.posted[1]?.body);
    expect(second.job).toMatchObject({ delivered: 3, attempts: 0 });
    // The conversation was stored once: the user turn and three replies.
    const history = await store.history(conversationKey("webhook", "conv-1"), 100);
    expect(history.map((turn) => [turn.role, turn.text])).toEqual([
      ["user", "one|two|three"],
      ["assistant", "one"],
      ["assistant", "two"],
      ["assistant", "three"],
    ]);
  });

  it("returns dead with config_invalid for an unknown channel, asking no brain and posting nothing", async () => {
    const { run, brain, poster } = await setup();
    const outcome = expectKind(await run(newJob(queued("one", "elsewhere"))), "dead");

    expect(outcome.error).toEqual({
      code: "config_invalid",
      message: 'no channel named "elsewhere" is configured',
      retryable: false,
    });
    expect(outcome.job.lastError).toEqual(outcome.error);
    expect(brain.calls).toBe(0);
    expect(poster.posted).toHaveLength(0);
  });
});
