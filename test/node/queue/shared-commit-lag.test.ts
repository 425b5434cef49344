import { describe, expect, it } from "vitest";
import { createMemoryConversationStore } from "../../../src/core/conversation/memory-conversation-store.js";
import type { Job } from "../../../src/core/lifecycle/job.js";
import type { LaneStore } from "../../../src/core/lifecycle/lane-store.js";
import { createMemoryLaneStore } from "../../../src/core/lifecycle/memory-lane-store.js";
import type { QueuedMessage } from "../../../src/core/message/inbound-message.js";
import { COMMIT_LAG_MS, createCommitLag } from "../../../src/node/queue/commit-lag.js";
import { createJobQueue } from "../../../src/node/queue/job-queue.js";
import { createLogSink } from "../../support/log-sink.js";

const message = (id: string, channel: string): QueuedMessage => ({
  id,
  channel,
  receivedAt: 0,
  message: { senderId: "s", conversationId: id, text: id },
});

/** A lane store over one database that has stopped answering: each add waits until `thaw`. */
function frozenStore(): { store: LaneStore; thaw: () => void } {
  const memory = createMemoryLaneStore(createMemoryConversationStore());
  let frozen = true;
  const waiting: (() => void)[] = [];
  const store: LaneStore = {
    ...memory,
    add: (job: Job) => {
      if (!frozen) return memory.add(job);
      return new Promise<void>((resolve) => {
        waiting.push(() => {
          void memory.add(job);
          resolve();
        });
      });
    },
  };
  const thaw = (): void => {
    frozen = false;
    for (const commit of waiting.splice(0)) commit();
  };
  return { store, thaw };
}

describe("commit lag shared by the queues of one database", () => {
  it("refuses a quiet channel's first message at once while another channel's commit lags", async () => {
    let now = 0;
    const { logger, lines } = createLogSink("info");
    const { store, thaw } = frozenStore();
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
    expect(quiet.isBehind?.()).toBe(true);
    expect(() => quiet.enqueue(message("second", "quiet"))).toThrow(expect.objectContaining({ code: "buffer_full" }));
    thaw();
    await accepted;
    expect(quiet.isBehind?.()).toBe(false);
    await quiet.enqueue(message("third", "quiet"));
    expect(lines.filter((line) => line.level === "warn")).toHaveLength(1);
    await Promise.all([busy.drain(1_000), quiet.drain(1_000)]);
  });
});
