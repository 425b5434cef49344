// The steps the job runner saves as it goes (after the brain, after each delivery), and what a
// save that fails or that the lane refuses does to the run.

import { describe, expect, it } from "vitest";
import { type Job, newJob } from "../../../src/core/lifecycle/job.js";
import { laneFencedError } from "../../../src/core/lifecycle/lane-store.js";
import { expectKind, queued, type SaveHook, setup, textsOf } from "./job-runner-harness.js";

describe("job runner", () => {
  it("calls the progress hook after the brain step and after each delivered reply except the last", async () => {
    const { run, poster } = await setup();
    const saved: Job[] = [];
    const postsAtSave: number[] = [];
    const onProgress: SaveHook = (job) => {
      saved.push(job);
      postsAtSave.push(poster.posted.length);
    };
    const outcome = expectKind(await run(newJob(queued("one|two|three")), onProgress), "done");

    expect(saved.map((job) => job.delivered)).toEqual([0, 1, 2]);
    expect(postsAtSave).toEqual([0, 1, 2]);
    expect(saved.every((job) => job.attempts === 0 && job.replies === outcome.job.replies)).toBe(true);
  });

  it("calls the progress hook only after the brain step for a single reply", async () => {
    const { run } = await setup();
    const saved: number[] = [];
    expectKind(
      await run(newJob(queued("only")), (job) => {
        saved.push(job.delivered);
      }),
      "done",
    );
    expect(saved).toEqual([0]);
  });

  it("turns a store that fails the brain's replies into a retry that asks the brain again, with the same numbers", async () => {
    const { run, brain, poster } = await setup();
    const outcome = expectKind(
      await run(newJob(queued("one|two")), () => {
        throw new Error("disk full");
      }),
      "retry",
    );

    expect(outcome.job.lastError).toEqual({
      code: "internal_error",
      message: "cannot save progress: disk full",
      retryable: true,
    });
    expect(outcome.job.attempts).toBe(1);
    // Nothing was stored, numbers and turns included: the retry starts from the brain again.
    expect(outcome.job.replies).toBeUndefined();
    expect(poster.posted).toHaveLength(0);
    const retried = expectKind(await run(outcome.job), "done");
    expect(brain.calls).toBe(2);
    expect(retried.job.replies?.map((reply) => reply.sequence)).toEqual([1, 2]);
    expect(poster.posted.map((post) => post.body.sequence)).toEqual([1, 2]);
  });

  it("stops at once, posting nothing more, when the lane refuses a write (another runner claimed it)", async () => {
    const { run, poster } = await setup();
    let saves = 0;
    const outcome = await run(newJob(queued("one|two|three")), () => {
      saves += 1;
      if (saves === 2) throw laneFencedError("webhook:conv-1");
    });
    expect(outcome.kind).toBe("fenced");
    // The first reply was posted after the brain's step was stored; its delivery's write was refused.
    expect(poster.posted.map((post) => post.body.text)).toEqual(["one"]);
  });

  it("turns a progress hook that rejects after a delivery into a retry that keeps the delivery", async () => {
    const { run, poster } = await setup();
    let saves = 0;
    const outcome = expectKind(
      await run(newJob(queued("one|two|three")), async () => {
        saves += 1;
        if (saves === 2) throw new Error("store unavailable");
      }),
      "retry",
    );
    expect(outcome.job.delivered).toBe(1);
    expect(outcome.job.lastError?.code).toBe("internal_error");
    expect(outcome.job.lastError?.retryable).toBe(true);
    expect(textsOf(poster.posted)).toEqual(["one"]);
  });
});
