import { afterEach, describe, expect, it } from "vitest";
import { createMemoryConversationStore } from "../../../src/core/conversation/memory-conversation-store.js";
import type { Job } from "../../../src/core/lifecycle/job.js";
import { type LaneStore, laneFencedError } from "../../../src/core/lifecycle/lane-store.js";
import { createMemoryLaneStore } from "../../../src/core/lifecycle/memory-lane-store.js";
import { silentLogger } from "../../../src/core/log/logger.js";
import type { QueuedMessage } from "../../../src/core/message/inbound-message.js";
import { createJobQueue } from "../../../src/node/queue/job-queue.js";
import { waitFor } from "../../support/wait-for.js";

const message = (id: string): QueuedMessage => ({
  id,
  channel: "web",
  receivedAt: 0,
  message: { senderId: "s", conversationId: "c", text: id },
});

const unhandled: unknown[] = [];
const collect = (reason: unknown): void => {
  unhandled.push(reason);
};

afterEach(() => {
  process.off("unhandledRejection", collect);
  unhandled.length = 0;
});

describe("a settlement whose lane was let go while it ran", () => {
  it("watches its write's rejection too: a fence refusing it is no unhandled rejection", async () => {
    process.on("unhandledRejection", collect);
    // Each finish is held until the test refuses it, as a fenced group would.
    const finishes = new Map<string, (error: unknown) => void>();
    const memory = createMemoryLaneStore(createMemoryConversationStore());
    const store: LaneStore = {
      ...memory,
      finish: (_ticket, job: Job) =>
        new Promise<void>((_resolve, reject) => {
          finishes.set(job.message.id, reject);
        }),
    };
    const started: string[] = [];
    let releaseSecond: (() => void) | undefined;
    const secondRuns = new Promise<void>((resolve) => {
      releaseSecond = resolve;
    });
    const queue = createJobQueue({
      capacity: 10,
      store,
      logger: silentLogger,
      run: async (job) => {
        started.push(job.message.id);
        if (job.message.id === "second") await secondRuns;
        return { kind: "done", job };
      },
    });
    await queue.enqueue(message("first"));
    await queue.enqueue(message("second"));
    // The first job finished; its delete waits. The second runs meanwhile.
    await waitFor(() => finishes.get("first"), 2_000, "the first job's finish");
    await waitFor(() => (started.includes("second") ? true : undefined), 2_000, "the second run");
    // Another runner claimed the conversation: the first delete is fenced, the lane let go of.
    finishes.get("first")?.(laneFencedError("7:web:c"));
    await waitFor(() => (queue.size === 0 ? true : undefined), 2_000, "the lane let go of");
    // The second run ends on a lane no longer here, and its write is fenced as well.
    releaseSecond?.();
    await waitFor(() => finishes.get("second"), 2_000, "the second job's finish");
    finishes.get("second")?.(laneFencedError("7:web:c"));
    // Node reports an unhandled rejection once the microtasks are done: a macrotask later.
    await new Promise((resolve) => setImmediate(resolve));
    expect(unhandled).toEqual([]);
    await queue.drain(100);
  });
});
