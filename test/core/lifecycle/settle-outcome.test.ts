import { describe, expect, it } from "vitest";
import type { DeadLetter } from "../../../src/core/dead-letters/dead-letter.js";
import type { Job, JobError, JobOutcome } from "../../../src/core/lifecycle/job.js";
import {
  type Settlement,
  settleOutcome,
  UNSTORED_RETRY_MS,
  unstoredSettlement,
} from "../../../src/core/lifecycle/settle-outcome.js";
import type { QueuedMessage } from "../../../src/core/message/inbound-message.js";

const NOW = Date.UTC(2026, 10, 25, 10, 0, 0);

const MESSAGE: QueuedMessage = {
  id: "msg-1",
  channel: "webhook",
  receivedAt: NOW - 5_000,
  message: { senderId: "user-1", conversationId: "conv-1", text: "hi" },
  trace: { traceId: "4bf92f3577b34da6a3ce929d0e0e4736", parentId: "00f067aa0ba902b7", flags: "01" },
};

const REPLIES = [
  { id: "reply-1", sequence: 1, body: '{"text":"a"}' },
  { id: "reply-2", sequence: 2, body: '{"text":"b"}' },
];

const AT_BRAIN: Job = { message: MESSAGE, delivered: 0, attempts: 3 };
const AT_DELIVERY: Job = { message: MESSAGE, replies: REPLIES, delivered: 1, attempts: 2 };
const REFUSED: JobError = {
  code: "delivery_failed",
  message: "outbound_url answered 400",
  retryable: false,
  status: 400,
};
const BRAIN_DOWN: JobError = { code: "brain_failed", message: 'brain "bot" failed: 503', retryable: true, status: 503 };

const hint = (id: string) => `replay ${id}`;

interface Row {
  readonly name: string;
  readonly outcome: Exclude<JobOutcome, { kind: "fenced" }>;
  readonly expected: Settlement;
}

const letterOf = (job: Job, error: JobError): DeadLetter => ({ job, error, attempts: job.attempts, diedAt: NOW });

const rows: readonly Row[] = [
  {
    name: "a job done is finished: it leaves its lane",
    outcome: { kind: "done", job: AT_DELIVERY },
    expected: { kind: "finish", job: AT_DELIVERY },
  },
  {
    name: "a retry postpones the job, with its progress, to now plus the delay",
    outcome: { kind: "retry", job: AT_DELIVERY, delayMs: 1_500 },
    expected: { kind: "postpone", job: AT_DELIVERY, dueAt: NOW + 1_500 },
  },
  {
    name: "a retry without delay is due at once",
    outcome: { kind: "retry", job: AT_BRAIN, delayMs: 0 },
    expected: { kind: "postpone", job: AT_BRAIN, dueAt: NOW },
  },
  {
    name: "a negative delay never schedules in the past",
    outcome: { kind: "retry", job: AT_BRAIN, delayMs: -20 },
    expected: { kind: "postpone", job: AT_BRAIN, dueAt: NOW },
  },
  {
    name: "a reply that cannot be delivered is buried with the job's attempts and the time of death",
    outcome: { kind: "dead", job: AT_DELIVERY, error: REFUSED, reason: "not_retryable" },
    expected: {
      kind: "bury",
      job: AT_DELIVERY,
      letter: letterOf(AT_DELIVERY, REFUSED),
      log: {
        level: "error",
        msg: "dead letter: outbound_url answered 400",
        fields: {
          id: "msg-1",
          message_id: "msg-1",
          trace_id: MESSAGE.trace?.traceId,
          channel: "webhook",
          conversation_id: "conv-1",
          sender_id: "user-1",
          received_at: new Date(NOW - 5_000).toISOString(),
          step: "delivery",
          reply_ids: ["reply-1", "reply-2"],
          delivered: 1,
          attempts: 2,
          code: "delivery_failed",
          status: 400,
          retryable: false,
          reason: "not_retryable",
          replay: "replay msg-1",
        },
      },
    },
  },
  {
    name: "a message whose brain never answered is buried at the brain step, with no reply ids",
    outcome: { kind: "dead", job: AT_BRAIN, error: BRAIN_DOWN, reason: "attempts_exhausted" },
    expected: {
      kind: "bury",
      job: AT_BRAIN,
      letter: letterOf(AT_BRAIN, BRAIN_DOWN),
      log: {
        level: "error",
        msg: 'dead letter: brain "bot" failed: 503',
        fields: {
          id: "msg-1",
          message_id: "msg-1",
          trace_id: MESSAGE.trace?.traceId,
          channel: "webhook",
          conversation_id: "conv-1",
          sender_id: "user-1",
          received_at: new Date(NOW - 5_000).toISOString(),
          step: "brain",
          reply_ids: undefined,
          delivered: 0,
          attempts: 3,
          code: "brain_failed",
          status: 503,
          retryable: true,
          reason: "attempts_exhausted",
          replay: "replay msg-1",
        },
      },
    },
  },
];

describe("settleOutcome", () => {
  for (const row of rows) {
    it(row.name, () => {
      expect(settleOutcome(row.outcome, { now: NOW, replayHint: hint })).toEqual(row.expected);
    });
  }

  it("runs a job whose settlement could not be stored again after a short wait, from its stored state", () => {
    expect(unstoredSettlement(AT_DELIVERY, NOW)).toEqual({
      kind: "postpone",
      job: AT_DELIVERY,
      dueAt: NOW + UNSTORED_RETRY_MS,
    });
  });
});
