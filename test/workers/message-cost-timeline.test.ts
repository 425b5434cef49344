/**
 * What the message timeline adds to what one message costs on Workers (with `admin` on): counted
 * by test/workers/support/message-cost-meter.ts through the Worker's real handlers, the real
 * conversation object and the real timeline shards, against the same messages without the
 * timeline (message-cost.test.ts). docs/workers.md prices it from these numbers; when one
 * changes, this test fails and the rows "with the timeline" there must follow.
 */
import { afterEach, describe, expect, it, vi } from "vitest";
import { ORDER_HOLD_MS } from "../../src/workers/conversation/conversation-lane.js";
import { forgetConversations } from "./support/conversations.js";
import { measureEach, shards } from "./support/message-cost-meter.js";
import { HAND_OVER_WAIT_MS, type MessageCost, perMillion, row } from "./support/message-cost-pricing.js";
import { replaceObjectWaits } from "./support/object-environment.js";
import { channelConfig } from "./support/test-config.js";

afterEach(async () => {
  replaceObjectWaits({});
  await forgetConversations();
  vi.restoreAllMocks();
});

/** An echo reply delivered first time without the timeline, as message-cost.test.ts counts it. */
const ECHO_WITHOUT_TIMELINE: MessageCost = {
  workerInvocations: 2,
  queueOperations: 3,
  objectRequests: 1,
  rowsRead: 9,
  rowsWritten: 2,
  subrequests: 3,
};

describe("what one message costs on Workers", () => {
  it("counts what the message timeline adds (with admin on): two shard requests, and the rows of each write", async () => {
    const config = channelConfig({ delivery: { initial_delay_ms: 20 }, top: { admin: { token_env: "ADMIN_SECRET" } } });
    // Each shard sets the alarm of its prune once per 10 minutes, whatever it takes: set here, so
    // that no message below counts it.
    for (const stub of shards()) await stub.write([], []);
    const { echo, retried, dead, slow, first } = await measureEach(config);
    // Each message: the Worker's write of its acceptance (a request and a subrequest; its row, its
    // index entry and the minute's counts: 3 rows written) and one write per run of its
    // conversation object (the row updated and the minute's counts: 2); each write reads 2 rows.
    expect({ echo: row(echo), retried: row(retried), dead: row(dead), slow: row(slow), first: row(first) }).toEqual({
      echo: [2, 3, 1 + 2, 9 + 4, 2 + 5, 3 + 2],
      // Two runs: the failed POST's, and the delivery's.
      retried: [2, 3, 4 + 3, 28 + 6, 9 + 7, 6 + 3],
      dead: [3, 6, 3 + 2, 11 + 4, 6 + 5, 6 + 2],
      slow: [2, 3, 2 + 2, 15 + 4, 4 + 5, 3 + 2],
      first: [2, 3, 1 + 2, 14 + 4, 5 + 5, 3 + 2],
    });
    // docs/workers.md prices it: $5.30 a million more for an echo reply ($1 more when its row is pruned).
    const within = HAND_OVER_WAIT_MS + ORDER_HOLD_MS;
    expect(perMillion(echo, within) - perMillion(ECHO_WITHOUT_TIMELINE, within)).toBeCloseTo(5.304, 3);
  });
});
