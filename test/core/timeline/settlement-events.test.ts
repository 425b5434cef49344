/**
 * The status a retry gives a message: waiting for a paused brain, or retrying. The route's own
 * brain decides, as it decides the retry: a fallback chain whose every brain failed is ruled on
 * the route's brain's error.
 */
import { describe, expect, it } from "vitest";
import type { Job } from "../../../src/core/lifecycle/job.js";
import { settlementEvent } from "../../../src/core/timeline/settlement-events.js";
import type { BrainCallEvent } from "../../../src/core/timeline/timeline-event.js";

const AT = Date.UTC(2026, 10, 30, 12, 0, 0);

const job: Job = {
  message: {
    id: "m1",
    channel: "webhook",
    receivedAt: AT,
    message: { senderId: "u1", conversationId: "u1", text: "hi" },
  },
  delivered: 0,
  attempts: 0,
  lastError: { code: "brain_failed", message: "the bot answered 429", retryable: true, status: 429 },
};

function call(brain: string, fallback: boolean, status: number, paused: boolean): BrainCallEvent {
  return {
    type: "brain_call",
    at: AT,
    brain,
    fallback,
    ok: false,
    duration_ms: 5,
    status,
    error_code: "brain_failed",
    error: `answered ${status}`,
    ...(paused ? { paused: true } : {}),
  };
}

const statusAfter = (events: BrainCallEvent[]) =>
  settlementEvent({ kind: "postpone", job, dueAt: AT + 30_000 }, events, AT + 10).status;

describe("the status after a retry", () => {
  it("is retrying when a fallback answered and the run failed later, though the route's brain was paused", () => {
    const answered: BrainCallEvent = {
      type: "brain_call",
      at: AT,
      brain: "backup",
      fallback: true,
      ok: true,
      duration_ms: 5,
    };
    expect(statusAfter([call("bot", false, 429, true), answered])).toBe("retrying");
  });

  it("is waiting when the route's brain paused, though a fallback then failed otherwise", () => {
    expect(statusAfter([call("bot", false, 429, true), call("backup", true, 500, false)])).toBe("waiting");
  });

  it("is retrying when the route's brain failed otherwise, though a fallback then met a pause", () => {
    expect(statusAfter([call("bot", false, 500, false), call("backup", true, 429, true)])).toBe("retrying");
  });

  it("is waiting when the route's brain alone was asked and its answer paused it", () => {
    expect(statusAfter([call("bot", false, 503, true)])).toBe("waiting");
  });
});
