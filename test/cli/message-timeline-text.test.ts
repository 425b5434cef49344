/**
 * The timeline `messages show` prints for people: every event type in words, why a message
 * waits, and client-given values escaped so that they cannot drive the terminal.
 */
import { describe, expect, it } from "vitest";
import { formatTimeline } from "../../src/cli/message-timeline-text.js";
import type { TimelineEvent } from "../../src/core/timeline/timeline-event.js";
import type { StoredTimeline } from "../../src/core/timeline/timeline-store.js";
import { timelineView, waitingOf } from "../../src/core/timeline/timeline-views.js";

const T = Date.UTC(2026, 0, 2, 3, 4, 5, 0);

function row(status: StoredTimeline["status"], events: TimelineEvent[]): StoredTimeline {
  return { id: "m1", channel: "webhook", conversationId: "c\u001b[31m1", acceptedAt: T, status, updatedAt: T, events };
}

/** The event lines, after the head and the headings. */
function eventLines(text: string): string[] {
  return text.split("\n\n")[1]?.trimEnd().split("\n").slice(1) ?? [];
}

describe("formatTimeline", () => {
  it("says what each event did, with the time after acceptance", () => {
    const stored = row("replayed", [
      { type: "accepted", at: T, client_address: "10.0.0.7", idempotency_key: "k-1", text: "hi\u0007 there" },
      {
        type: "brain_call",
        at: T + 5,
        brain: "main",
        fallback: false,
        ok: false,
        duration_ms: 1200,
        status: 503,
        error_code: "brain_failed",
        error: "the brain answered 503",
      },
      {
        type: "brain_call",
        at: T + 1205,
        brain: "backup",
        fallback: true,
        ok: true,
        duration_ms: 300,
        tokens: { input: 12, output: 5 },
      },
      { type: "reply", at: T + 1505, reply_id: "r1", sequence: 1, text: "hello back" },
      {
        type: "attempt",
        at: T + 1505,
        reply_id: "r1",
        sequence: 1,
        ok: false,
        duration_ms: 10_000,
        error_code: "delivery_timeout",
        error: "no answer within 10000 ms",
      },
      {
        type: "retry",
        at: T + 11_505,
        next_attempt_at: T + 75_000,
        error_code: "delivery_timeout",
        error: "no answer within 10000 ms",
      },
      { type: "attempt", at: T + 75_000, reply_id: "r1", sequence: 1, ok: true, duration_ms: 4, status: 200 },
      { type: "dead_letter", at: T + 3_700_000, error_code: "max_age", error: "too old\u001b[2J" },
      { type: "replayed", at: T + 3_800_000 },
    ]);
    const text = formatTimeline(timelineView(stored, undefined));
    expect(text.split("\n\n")[0]).toBe(
      [
        "message       m1",
        "channel       webhook",
        "conversation  c\\u001b[31m1",
        "status        replayed",
        "accepted      2026-01-02T03:04:05.000Z",
        "updated       2026-01-02T03:04:05.000Z",
      ].join("\n"),
    );
    expect(eventLines(text).map((line) => line.split(/ {2,}/))).toEqual([
      [
        "2026-01-02T03:04:05.000Z",
        "+0.000s",
        "accepted",
        'client 10.0.0.7, idempotency key k-1, text "hi\\u0007 there"',
      ],
      [
        "2026-01-02T03:04:05.005Z",
        "+0.005s",
        "brain_call",
        "main: failed in 1200 ms, HTTP 503 — brain_failed: the brain answered 503",
      ],
      ["2026-01-02T03:04:06.205Z", "+1.205s", "brain_call", "backup (fallback): ok in 300 ms, tokens 12 in / 5 out"],
      ["2026-01-02T03:04:06.505Z", "+1.505s", "reply", '#1 r1, text "hello back"'],
      [
        "2026-01-02T03:04:06.505Z",
        "+1.505s",
        "attempt",
        "#1 r1: failed in 10000 ms — delivery_timeout: no answer within 10000 ms",
      ],
      [
        "2026-01-02T03:04:16.505Z",
        "+11.505s",
        "retry",
        "next try at 2026-01-02T03:05:20.000Z — delivery_timeout: no answer within 10000 ms",
      ],
      ["2026-01-02T03:05:20.000Z", "+1m15s", "attempt", "#1 r1: HTTP 200 in 4 ms"],
      ["2026-01-02T04:05:45.000Z", "+1h01m", "dead_letter", "gave up — max_age: too old\\u001b[2J"],
      ["2026-01-02T04:07:25.000Z", "+1h03m", "replayed", "the dead letter was put back in the queue"],
    ]);
  });

  it("says why a message waits: a paused brain, a retry, the queue", () => {
    const paused = row("waiting", [
      { type: "accepted", at: T },
      { type: "brain_call", at: T + 1, brain: "main", fallback: false, ok: false, duration_ms: 0, paused: true },
      { type: "retry", at: T + 1, next_attempt_at: T + 30_000, error_code: "brain_paused", error: "paused" },
    ]);
    const pausedText = formatTimeline(timelineView(paused, waitingOf(paused, undefined)));
    expect(pausedText).toContain("\nwaiting       the brain is paused; next try at 2026-01-02T03:04:35.000Z\n");
    expect(pausedText).toMatch(/ brain_call +main: paused, not asked\n/);

    const pausedByIt = row("waiting", [
      { type: "accepted", at: T },
      {
        type: "brain_call",
        at: T + 1,
        brain: "main",
        fallback: false,
        ok: false,
        duration_ms: 40,
        status: 429,
        error_code: "brain_failed",
        error: "the bot answered 429",
        paused: true,
      },
      { type: "retry", at: T + 41, next_attempt_at: T + 30_000, error_code: "brain_failed", error: "429" },
    ]);
    const pausedByItText = formatTimeline(timelineView(pausedByIt, waitingOf(pausedByIt, undefined)));
    expect(pausedByItText).toContain("\nwaiting       the brain is paused; next try at 2026-01-02T03:04:35.000Z\n");
    expect(pausedByItText).toMatch(/ brain_call +main: failed in 40 ms, HTTP 429.*; the brain is paused\n/);

    const retrying = row("retrying", [
      { type: "accepted", at: T },
      { type: "retry", at: T + 1, next_attempt_at: T + 2_000, error_code: "delivery_failed", error: "answered 500" },
    ]);
    expect(formatTimeline(timelineView(retrying, waitingOf(retrying, undefined)))).toContain(
      "\nwaiting       an attempt failed; next try at 2026-01-02T03:04:07.000Z\n",
    );

    const queued = row("accepted", [{ type: "accepted", at: T }]);
    expect(formatTimeline(timelineView(queued, waitingOf(queued, undefined)))).toContain(
      "\nwaiting       in the queue, not started yet\n",
    );
  });

  it("shows the fields of an event type it does not know", () => {
    const view = {
      ...timelineView(row("delivered", []), undefined),
      events: [{ at: "2026-01-02T03:04:05.000Z", type: "moved", to: "eu\n" }],
    };
    expect(eventLines(formatTimeline(view))).toEqual(['2026-01-02T03:04:05.000Z  +0.000s  moved  {"to":"eu\\n"}']);
  });
});
