/**
 * What one message costs on Workers, counted through the Worker's real handlers and the real
 * conversation object (the dead-letter store, for a dead letter, and the channel's receiver
 * object, for a failed POST and the success after it) by test/workers/support/message-cost-meter.ts:
 * Worker invocations, Queues operations, Durable Object requests, SQLite rows read and written
 * and subrequests. docs/workers.md prices a million messages from these numbers; when one
 * changes, this test fails and the table there must follow. The test prices them too, at the
 * prices the page quotes, and holds an echo message under $5 a million and a retried reply and a
 * dead letter under what they cost before issue 31. What the message timeline adds (with `admin`
 * on) is counted in message-cost-timeline.test.ts.
 */
import { afterEach, describe, expect, it, vi } from "vitest";
import { ORDER_HOLD_MS } from "../../src/workers/conversation/conversation-lane.js";
import { forgetConversations } from "./support/conversations.js";
import { measureEach } from "./support/message-cost-meter.js";
import { HAND_OVER_WAIT_MS, type MessageCost, perMillion, row } from "./support/message-cost-pricing.js";
import { replaceObjectWaits } from "./support/object-environment.js";
import { channelConfig } from "./support/test-config.js";

afterEach(async () => {
  replaceObjectWaits({});
  await forgetConversations();
  vi.restoreAllMocks();
});

/** What a retried reply and a dead letter took before issue 31, the deletion of their id a day later included. */
const BEFORE: Record<"retried" | "dead", MessageCost> = {
  retried: {
    workerInvocations: 2,
    queueOperations: 3,
    objectRequests: 4,
    rowsRead: 28,
    rowsWritten: 10,
    subrequests: 6,
  },
  dead: { workerInvocations: 3, queueOperations: 6, objectRequests: 3, rowsRead: 16, rowsWritten: 8, subrequests: 6 },
};

describe("what one message costs on Workers", () => {
  it("counts an echo reply delivered first time, one retry, and a dead letter", async () => {
    const { echo, retried, dead, slow, first } = await measureEach(
      channelConfig({ delivery: { initial_delay_ms: 20 } }),
    );
    expect({ echo: row(echo), retried: row(retried), dead: row(dead), slow: row(slow), first: row(first) }).toEqual({
      // Issue 31: 2 rows written, and none later (the row that keeps its id is taken over by a
      // later id instead of being deleted).
      echo: [2, 3, 1, 9, 2, 3],
      // The failed POST and the success after it are each reported to the receiver object.
      retried: [2, 3, 4, 28, 9, 6],
      dead: [3, 6, 3, 11, 6, 6],
      // A receiver slower than the hand-over's wait: the run goes on under an alarm set to fire
      // at once (a row and a request), and the expiry's alarm is set again after it (a row).
      slow: [2, 3, 2, 15, 4, 3],
      // The first message of a conversation also notes when it was active, and sets the alarm
      // of its expiry.
      first: [2, 3, 1, 14, 5, 3],
    });

    // Priced as docs/workers.md prices them, with a receiver answering within the hand-over's
    // wait (a slow one: 100 ms), and up to the order hold on top.
    const within = HAND_OVER_WAIT_MS + ORDER_HOLD_MS;
    expect(perMillion(echo, within)).toBeLessThan(5);
    // Against the rows these took before issue 31 (the deletion of the id a day later included).
    expect(perMillion(retried, 2 * within)).toBeLessThan(perMillion(BEFORE.retried, 2 * within));
    expect(perMillion(dead, within)).toBeLessThan(perMillion(BEFORE.dead, within));
  });
});
