import { describe, expect, it } from "vitest";
import { ChannelError, type ErrorCode } from "../../../src/core/channel-error.js";
import { classifyFailure, type DeadReason } from "../../../src/core/consumer/classify-failure.js";
import type { Job } from "../../../src/core/lifecycle/job.js";
import type { RetryPolicy } from "../../../src/core/lifecycle/retry-policy.js";
import type { QueuedMessage } from "../../../src/core/message/inbound-message.js";

const T0 = Date.UTC(2025, 0, 1, 10, 0, 0);

/** 1 s doubling to 60 s, five attempts, one hour. */
const POLICY: RetryPolicy = { initialDelayMs: 1_000, maxDelayMs: 60_000, maxAttempts: 5, maxAgeMs: 3_600_000 };

const MESSAGE: QueuedMessage = {
  id: "msg-1",
  channel: "webhook",
  receivedAt: T0,
  message: { senderId: "user-1", conversationId: "user-1", text: "hi" },
};

const REPLIES = [
  { id: "reply-1", sequence: 1, body: '{"text":"a"}' },
  { id: "reply-2", sequence: 2, body: '{"text":"b"}' },
];

/** The error of a row: only the facts classifyFailure reads. */
interface RowError {
  readonly code?: ErrorCode;
  readonly retryable: boolean;
  readonly upstreamStatus?: number;
  readonly retryAfterMs?: number;
}

type Expected =
  | { readonly kind: "retry"; readonly delayMs: number }
  | { readonly kind: "dead"; readonly reason: DeadReason };

interface Row {
  readonly name: string;
  readonly job: { readonly attempts: number; readonly stepStartedAt?: number };
  readonly error: RowError;
  readonly attemptAt: number;
  readonly now: number;
  readonly policy?: RetryPolicy;
  readonly jitter: number;
  readonly expected: Expected & {
    readonly attempts: number;
    readonly stepStartedAt: number;
    /** lastError.status; undefined when the key must be absent. */
    readonly status: number | undefined;
  };
}

const rows: readonly Row[] = [
  {
    name: "a first retryable failure retries after the jittered backoff",
    job: { attempts: 0 },
    error: { retryable: true, upstreamStatus: 503 },
    attemptAt: T0,
    now: T0 + 100,
    jitter: 0.5,
    expected: { kind: "retry", delayMs: 500, attempts: 1, stepStartedAt: T0, status: 503 },
  },
  {
    name: "a third failure draws below a ceiling doubled twice",
    job: { attempts: 2, stepStartedAt: T0 },
    error: { retryable: true, upstreamStatus: 500 },
    attemptAt: T0 + 5_000,
    now: T0 + 5_100,
    jitter: 0.5,
    expected: { kind: "retry", delayMs: 2_000, attempts: 3, stepStartedAt: T0, status: 500 },
  },
  {
    name: "a zero jitter draw retries at once",
    job: { attempts: 0 },
    error: { retryable: true, upstreamStatus: 502 },
    attemptAt: T0,
    now: T0,
    jitter: 0,
    expected: { kind: "retry", delayMs: 0, attempts: 1, stepStartedAt: T0, status: 502 },
  },
  {
    name: "a failure that is not retryable is dead at once as not_retryable",
    job: { attempts: 0 },
    error: { retryable: false, upstreamStatus: 400 },
    attemptAt: T0,
    now: T0 + 100,
    jitter: 0.5,
    expected: { kind: "dead", reason: "not_retryable", attempts: 1, stepStartedAt: T0, status: 400 },
  },
  {
    name: "not_retryable wins over attempts_exhausted",
    job: { attempts: 4, stepStartedAt: T0 },
    error: { retryable: false, upstreamStatus: 404 },
    attemptAt: T0 + 10_000,
    now: T0 + 10_000,
    jitter: 0.5,
    expected: { kind: "dead", reason: "not_retryable", attempts: 5, stepStartedAt: T0, status: 404 },
  },
  {
    name: "the attempt that reaches max_attempts is dead as attempts_exhausted",
    job: { attempts: 4, stepStartedAt: T0 },
    error: { retryable: true, upstreamStatus: 503 },
    attemptAt: T0 + 10_000,
    now: T0 + 10_000,
    jitter: 0.5,
    expected: { kind: "dead", reason: "attempts_exhausted", attempts: 5, stepStartedAt: T0, status: 503 },
  },
  {
    name: "the attempt before max_attempts still retries",
    job: { attempts: 3, stepStartedAt: T0 },
    error: { retryable: true, upstreamStatus: 503 },
    attemptAt: T0 + 10_000,
    now: T0 + 10_000,
    jitter: 0.5,
    expected: { kind: "retry", delayMs: 4_000, attempts: 4, stepStartedAt: T0, status: 503 },
  },
  {
    name: "max_attempts 1 makes the first retryable failure dead",
    job: { attempts: 0 },
    error: { retryable: true, upstreamStatus: 503 },
    attemptAt: T0,
    now: T0,
    policy: { ...POLICY, maxAttempts: 1 },
    jitter: 0.5,
    expected: { kind: "dead", reason: "attempts_exhausted", attempts: 1, stepStartedAt: T0, status: 503 },
  },
  {
    name: "a next attempt that would start past max_age is dead as max_age",
    job: { attempts: 0, stepStartedAt: T0 },
    error: { retryable: true, upstreamStatus: 503 },
    attemptAt: T0 + 3_599_000,
    now: T0 + 3_599_501,
    jitter: 0.5,
    expected: { kind: "dead", reason: "max_age", attempts: 1, stepStartedAt: T0, status: 503 },
  },
  {
    name: "a next attempt exactly at max_age still retries",
    job: { attempts: 0, stepStartedAt: T0 },
    error: { retryable: true, upstreamStatus: 503 },
    attemptAt: T0 + 3_599_000,
    now: T0 + 3_599_500,
    jitter: 0.5,
    expected: { kind: "retry", delayMs: 500, attempts: 1, stepStartedAt: T0, status: 503 },
  },
  {
    name: "a Retry-After that pushes the next attempt past max_age is dead as max_age",
    job: { attempts: 0, stepStartedAt: T0 },
    error: { retryable: true, upstreamStatus: 429, retryAfterMs: 30_000 },
    attemptAt: T0 + 3_580_000,
    now: T0 + 3_580_000,
    jitter: 0.5,
    expected: { kind: "dead", reason: "max_age", attempts: 1, stepStartedAt: T0, status: 429 },
  },
  {
    name: "a Retry-After above the backoff raises the delay",
    job: { attempts: 0 },
    error: { retryable: true, upstreamStatus: 429, retryAfterMs: 5_000 },
    attemptAt: T0,
    now: T0 + 100,
    jitter: 0.5,
    expected: { kind: "retry", delayMs: 5_000, attempts: 1, stepStartedAt: T0, status: 429 },
  },
  {
    name: "a Retry-After below the backoff leaves the backoff",
    job: { attempts: 2, stepStartedAt: T0 },
    error: { retryable: true, upstreamStatus: 503, retryAfterMs: 10 },
    attemptAt: T0 + 1_000,
    now: T0 + 1_000,
    jitter: 0.5,
    expected: { kind: "retry", delayMs: 2_000, attempts: 3, stepStartedAt: T0, status: 503 },
  },
  {
    name: "a Retry-After above max_delay is capped at max_delay",
    job: { attempts: 0 },
    error: { retryable: true, upstreamStatus: 503, retryAfterMs: 10_000_000 },
    attemptAt: T0,
    now: T0 + 100,
    jitter: 0.5,
    expected: { kind: "retry", delayMs: 60_000, attempts: 1, stepStartedAt: T0, status: 503 },
  },
  {
    name: "stepStartedAt is kept from the job when it has one",
    job: { attempts: 1, stepStartedAt: T0 - 10_000 },
    error: { retryable: true, upstreamStatus: 503 },
    attemptAt: T0,
    now: T0 + 100,
    jitter: 0.5,
    expected: { kind: "retry", delayMs: 1_000, attempts: 2, stepStartedAt: T0 - 10_000, status: 503 },
  },
  {
    name: "stepStartedAt is the attempt's start, not now, when the job has none",
    job: { attempts: 0 },
    error: { retryable: true, upstreamStatus: 503 },
    attemptAt: T0 + 5,
    now: T0 + 9_000,
    jitter: 0.5,
    expected: { kind: "retry", delayMs: 500, attempts: 1, stepStartedAt: T0 + 5, status: 503 },
  },
  {
    name: "a failure without an upstream status leaves status out of lastError",
    job: { attempts: 0 },
    error: { retryable: true },
    attemptAt: T0,
    now: T0 + 10_000,
    jitter: 0.5,
    expected: { kind: "retry", delayMs: 500, attempts: 1, stepStartedAt: T0, status: undefined },
  },
  {
    name: "a brain failure is classified like a delivery failure",
    job: { attempts: 0 },
    error: { code: "brain_failed", retryable: true, upstreamStatus: 502 },
    attemptAt: T0,
    now: T0 + 100,
    jitter: 0.5,
    expected: { kind: "retry", delayMs: 500, attempts: 1, stepStartedAt: T0, status: 502 },
  },
];

function errorOf(row: Row): ChannelError {
  const { code = "delivery_failed", ...options } = row.error;
  const message = options.upstreamStatus === undefined ? "no answer" : `answered ${options.upstreamStatus}`;
  return new ChannelError(code, message, options);
}

function jobOf(row: Row): Job {
  return { message: MESSAGE, replies: REPLIES, delivered: 1, ...row.job };
}

describe("classifyFailure", () => {
  // A loop rather than it.each("$name"), which truncates long names in the report.
  for (const row of rows) {
    it(row.name, () => {
      const error = errorOf(row);
      const job = jobOf(row);
      const verdict = classifyFailure({
        job,
        error,
        attemptAt: row.attemptAt,
        now: row.now,
        policy: row.policy ?? POLICY,
        jitter: row.jitter,
      });

      const { expected } = row;
      expect(verdict.kind).toBe(expected.kind);
      expect(verdict.kind === "retry" ? verdict.delayMs : undefined).toBe(
        expected.kind === "retry" ? expected.delayMs : undefined,
      );
      expect(verdict.kind === "dead" ? verdict.reason : undefined).toBe(
        expected.kind === "dead" ? expected.reason : undefined,
      );
      expect(verdict.job.attempts).toBe(expected.attempts);
      expect(verdict.job.stepStartedAt).toBe(expected.stepStartedAt);

      const lastError = {
        code: error.code,
        message: error.message,
        retryable: error.retryable,
        ...(expected.status === undefined ? {} : { status: expected.status }),
      };
      // toStrictEqual: an absent status must be absent, not `status: undefined`.
      expect(verdict.job.lastError).toStrictEqual(lastError);
      if (verdict.kind === "dead") expect(verdict.error).toStrictEqual(lastError);

      // The rest of the job is carried over untouched.
      expect(verdict.job.message).toBe(job.message);
      expect(verdict.job.replies).toBe(job.replies);
      expect(verdict.job.delivered).toBe(job.delivered);
    });
  }

  it("does not change the job it is given", () => {
    const job: Job = { message: MESSAGE, delivered: 0, attempts: 0 };
    const snapshot = structuredClone(job);
    classifyFailure({
      job,
      error: new ChannelError("delivery_failed", "answered 503", { retryable: true, upstreamStatus: 503 }),
      attemptAt: T0,
      now: T0,
      policy: POLICY,
      jitter: 0.5,
    });
    expect(job).toStrictEqual(snapshot);
  });
});
