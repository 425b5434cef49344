// What the job runner makes of a failed attempt: a retry with its delay and its count, or a
// dead letter; the time the failing step started; the line a receiver's 410 Gone logs.

import { describe, expect, it } from "vitest";
import { newJob } from "../../../src/core/lifecycle/job.js";
import { countingEcho, expectKind, OUTBOUND_URL, queued, setup, T0, textsOf } from "./job-runner-harness.js";

describe("job runner", () => {
  it("returns retry on a failed delivery, keeping the delivered count and counting the attempt", async () => {
    const { run, poster, lines } = await setup({ answers: [200, 503] });
    const outcome = expectKind(await run(newJob(queued("one|two|three"))), "retry");

    expect(poster.posted).toHaveLength(2);
    expect(outcome.job.delivered).toBe(1);
    expect(outcome.job.attempts).toBe(1);
    expect(outcome.job.replies).toHaveLength(3);
    // random() is 0.5 and initial_delay_ms defaults to 1 s.
    expect(outcome.delayMs).toBe(500);
    expect(outcome.job.lastError).toEqual({
      code: "delivery_failed",
      message: "outbound_url answered 503",
      retryable: true,
      status: 503,
    });
    expect(lines).toContainEqual(
      expect.objectContaining({
        level: "warn",
        msg: "attempt failed, retrying: outbound_url answered 503",
        step: "delivery",
        reply_id: "reply-2",
        attempts: 1,
        retry_in_ms: 500,
      }),
    );
  });

  it("counts a second failure of the same step as attempt 2", async () => {
    const { run } = await setup({ answers: [503] });
    const first = expectKind(await run(newJob(queued("one"))), "retry");
    const second = expectKind(await run(first.job), "retry");
    expect(second.job.attempts).toBe(2);
    // The ceiling doubled: 0.5 × 2 s.
    expect(second.delayMs).toBe(1_000);
  });

  it("honours Retry-After from the receiver", async () => {
    const { run } = await setup({ answers: [{ status: 429, retryAfter: "7" }] });
    const outcome = expectKind(await run(newJob(queued("one"))), "retry");
    expect(outcome.delayMs).toBe(7_000);
    expect(outcome.job.lastError?.status).toBe(429);
  });

  it("returns dead with lastError.status 400 for a non-retryable status, after one attempt", async () => {
    const { run, poster } = await setup({ answers: [400] });
    const outcome = expectKind(await run(newJob(queued("one|two"))), "dead");

    expect(poster.posted).toHaveLength(1);
    expect(outcome.error).toEqual({
      code: "delivery_failed",
      message: "outbound_url answered 400",
      retryable: false,
      status: 400,
    });
    expect(outcome.job.lastError).toEqual(outcome.error);
    expect(outcome.job.delivered).toBe(0);
    expect(outcome.job.attempts).toBe(1);
  });

  it("returns dead once max_attempts is reached", async () => {
    const { run } = await setup({ answers: [503], delivery: { max_attempts: 2 } });
    const first = expectKind(await run(newJob(queued("one"))), "retry");
    const second = expectKind(await run(first.job), "dead");
    expect(second.job.attempts).toBe(2);
    expect(second.error.status).toBe(503);
  });

  it("retries a failing brain without replies, so the retry asks the brain again", async () => {
    let failing = true;
    const brain = countingEcho(() => (failing ? new Error("model overloaded") : undefined));
    const { run, poster, lines } = await setup({ brain });
    const first = expectKind(await run(newJob(queued("one"))), "retry");

    expect(first.job.replies).toBeUndefined();
    expect(first.job.lastError).toMatchObject({ code: "brain_failed", retryable: true });
    expect(first.job.attempts).toBe(1);
    expect(lines).toContainEqual(expect.objectContaining({ level: "warn", step: "brain", code: "brain_failed" }));

    failing = false;
    expectKind(await run(first.job), "done");
    expect(brain.calls).toBe(2);
    expect(textsOf(poster.posted)).toEqual(["one"]);
  });

  it("stamps stepStartedAt with the injected clock at the start of the attempt", async () => {
    // The POST takes 2 s of fake time: stepStartedAt is when it began, not when it failed.
    const { run, clock } = await setup({ answers: [503, 503, 200], duringPost: (c) => c.advance(2_000) });
    const start = T0 + 123_456;
    clock.set(start);

    const first = expectKind(await run(newJob(queued("one"))), "retry");
    expect(first.job.stepStartedAt).toBe(start);

    clock.advance(60_000);
    const second = expectKind(await run(first.job), "retry");
    expect(second.job.stepStartedAt).toBe(start);
    expect(second.job.attempts).toBe(2);

    // A finished step leaves no failure state behind.
    const done = expectKind(await run(second.job), "done");
    expect(done.job.stepStartedAt).toBeUndefined();
    expect(done.job.lastError).toBeUndefined();
    expect(done.job.attempts).toBe(0);
  });

  it("stamps stepStartedAt of a failed brain step with the injected clock", async () => {
    const brain = countingEcho(() => new Error("down"));
    const { run, clock } = await setup({ brain });
    clock.set(T0 + 42);
    const outcome = expectKind(await run(newJob(queued("one"))), "retry");
    expect(outcome.job.stepStartedAt).toBe(T0 + 42);
  });

  it('logs the "410 Gone" error line and dead-letters on 410', async () => {
    const { run, lines } = await setup({ answers: [410] });
    const outcome = expectKind(await run(newJob(queued("one"))), "dead");

    expect(outcome.error.status).toBe(410);
    const gone = lines.filter((line) => String(line.msg).includes("410 Gone"));
    expect(gone).toEqual([
      expect.objectContaining({
        level: "error",
        msg: "outbound_url answered 410 Gone: the receiver says it no longer exists",
        channel: "webhook",
        message_id: "msg-1",
        reply_id: "reply-1",
        step: "delivery",
        code: "delivery_failed",
        status: 410,
        attempts: 1,
        url: OUTBOUND_URL,
      }),
    ]);
  });

  it('does not log "410 Gone" for another non-retryable status', async () => {
    const { run, lines } = await setup({ answers: [404] });
    expectKind(await run(newJob(queued("one"))), "dead");
    expect(lines.some((line) => String(line.msg).includes("410 Gone"))).toBe(false);
  });
});
