/**
 * A brain that says to wait (429, 503) and a call refused because it is paused spend no
 * attempt: the job waits for the pause's end, as replies wait for a receiver that is down.
 */
import { describe, expect, it } from "vitest";
import { MAX_PAUSE_MS, pausedError } from "../../../src/core/brain/limits/brain-pause.js";
import { ChannelError } from "../../../src/core/channel-error.js";
import { classifyFailure } from "../../../src/core/consumer/classify-failure.js";
import type { Job } from "../../../src/core/lifecycle/job.js";
import type { RetryPolicy } from "../../../src/core/lifecycle/retry-policy.js";

const T0 = Date.UTC(2025, 0, 1, 10, 0, 0);
const POLICY: RetryPolicy = { initialDelayMs: 1_000, maxDelayMs: 60_000, maxAttempts: 2, maxAgeMs: 600_000 };

function job(attempts: number, stepStartedAt?: number): Job {
  return {
    message: {
      id: "msg-1",
      channel: "webhook",
      receivedAt: T0,
      message: { senderId: "u1", conversationId: "u1", text: "hi" },
    },
    delivered: 0,
    attempts,
    ...(stepStartedAt === undefined ? {} : { stepStartedAt }),
  };
}

describe("classifyFailure of a call its paused brain refused", () => {
  it("counts no attempt, even on the last one, and retries when the pause ends", () => {
    const error = pausedError("local", T0 + 12_000, 429, T0);
    const verdict = classifyFailure({ job: job(1), error, attemptAt: T0, now: T0, policy: POLICY, jitter: 0.5 });
    expect(verdict).toMatchObject({ kind: "retry", delayMs: 12_000, job: { attempts: 1, stepStartedAt: T0 } });
    expect(verdict.job.lastError).toMatchObject({ code: "brain_failed", retryable: true });
  });

  it("is a dead letter for max_age once the pause ends past the step's age limit", () => {
    const error = pausedError("local", T0 + 30_000, 429, T0);
    const started = T0 - POLICY.maxAgeMs + 10_000;
    const verdict = classifyFailure({
      job: job(0, started),
      error,
      attemptAt: T0,
      now: T0,
      policy: POLICY,
      jitter: 0.5,
    });
    expect(verdict).toMatchObject({ kind: "dead", reason: "max_age", job: { attempts: 0 } });
  });

  it("counts no attempt for the answer that paused the brain either: a brain that says to wait is waited for", () => {
    const error = new ChannelError("brain_failed", "answered 429", {
      retryable: true,
      upstreamStatus: 429,
      retryAfterMs: 5_000,
    });
    const verdict = classifyFailure({ job: job(1), error, attemptAt: T0, now: T0, policy: POLICY, jitter: 0.5 });
    expect(verdict).toMatchObject({ kind: "retry", delayMs: 5_000, job: { attempts: 1 } });
  });

  it("waits no longer than the brain's longest pause, whatever its Retry-After says", () => {
    const error = new ChannelError("brain_failed", "answered 503", {
      retryable: true,
      upstreamStatus: 503,
      retryAfterMs: 90_000_000,
    });
    const policy = { ...POLICY, maxAgeMs: 86_400_000 };
    const verdict = classifyFailure({ job: job(0), error, attemptAt: T0, now: T0, policy, jitter: 0.5 });
    expect(verdict).toMatchObject({ kind: "retry", delayMs: MAX_PAUSE_MS, job: { attempts: 0 } });
  });

  it("counts a receiver's 503 as an attempt: the receiver circuit, not a brain's pause, rules on it", () => {
    const error = new ChannelError("delivery_failed", "answered 503", { retryable: true, upstreamStatus: 503 });
    const verdict = classifyFailure({ job: job(1), error, attemptAt: T0, now: T0, policy: POLICY, jitter: 0.5 });
    expect(verdict).toMatchObject({ kind: "dead", reason: "attempts_exhausted", job: { attempts: 2 } });
  });
});
