import { describe, expect, it } from "vitest";
import type { QueuedMessage } from "../../../src/core/message/inbound-message.js";
import { COMMIT_LAG_MS, createCommitLag } from "../../../src/node/queue/commit-lag.js";
import { createJobQueue } from "../../../src/node/queue/job-queue.js";
import { frozenLaneStore } from "../../support/frozen-lane-store.js";
import { createLogSink } from "../../support/log-sink.js";

const message = (id: string, channel: string): QueuedMessage => ({
  id,
  channel,
  receivedAt: 0,
  message: { senderId: "s", conversationId: id, text: id },
});

describe("commit lag shared by the queues of one database", () => {
  it("refuses a quiet channel's first message at once while another channel's commit lags", async () => {
    let now = 0;
    const { logger, lines } = createLogSink("info");
    const { store, thaw } = frozenLaneStore();
    const commitLag = createCommitLag(() => now, logger, undefined);
    const queueOf = () =>
      createJobQueue({
        capacity: 10,
        store,
        commitLag,
        logger,
        now: () => now,
        run: (job) => Promise.resolve({ kind: "done", job }),
      });
    const busy = queueOf();
    const quiet = queueOf();
    const accepted = busy.enqueue(message("first", "busy"));
    now = COMMIT_LAG_MS + 1;
    expect(quiet.refusal?.()).toMatchObject({ code: "buffer_full" });
    expect(() => quiet.enqueue(message("second", "quiet"))).toThrow(expect.objectContaining({ code: "buffer_full" }));
    thaw();
    await accepted;
    expect(quiet.refusal?.()).toBeUndefined();
    await quiet.enqueue(message("third", "quiet"));
    expect(lines.filter((line) => line.level === "warn")).toHaveLength(1);
    await Promise.all([busy.drain(1_000), quiet.drain(1_000)]);
  });
});
