/**
 * A replica's lane whose claim changed while a run went on (its lane let go of and claimed again,
 * a lapse of its lease): the run's job read again does not start beside the run, and the run's
 * end changes nothing in memory but has the lane read again. Two runs of one job at once each
 * asked the brain and each posted its own replies.
 */
import { describe, expect, it } from "vitest";
import { conversationKey } from "../../../src/core/conversation/conversation-store.js";
import { createMemoryConversationStore } from "../../../src/core/conversation/memory-conversation-store.js";
import type { Job, JobOutcome } from "../../../src/core/lifecycle/job.js";
import { type LaneStore, type LaneTicket, laneFencedError } from "../../../src/core/lifecycle/lane-store.js";
import { createMemoryLaneStore, type MemoryLaneStore } from "../../../src/core/lifecycle/memory-lane-store.js";
import type { QueuedMessage } from "../../../src/core/message/inbound-message.js";
import { createJobQueue } from "../../../src/node/queue/job-queue.js";
import type { LaneOwnership } from "../../../src/node/queue/lane-ownership.js";
import { createLogSink } from "../../support/log-sink.js";
import { waitFor } from "../../support/wait-for.js";

const KEY = conversationKey("web", "c");

const message = (id: string): QueuedMessage => ({
  id,
  channel: "web",
  receivedAt: 0,
  message: { senderId: "s", conversationId: "c", text: id },
});

const jobOf = (id: string): Job => ({ message: message(id), delivered: 0, attempts: 0 });

/** The claims of one lane as a replica holds them: the test moves the epoch, or loses the lane. */
function claims(): LaneOwnership & { epoch: number | undefined; rereads: string[] } {
  const state = {
    epoch: 1 as number | undefined,
    rereads: [] as string[],
    place: () => Promise.resolve("here" as const),
    ticket: (key: string): LaneTicket | undefined =>
      state.epoch === undefined ? undefined : { key, epoch: state.epoch },
    released: () => undefined,
    lost: () => {
      state.epoch = undefined;
    },
    reread: (key: string) => {
      state.rereads.push(key);
    },
    mayRun: () => true,
    unsure: () => undefined,
  };
  return state;
}

/** The memory store, with each finish held until the test settles it, as a group in flight is. */
function heldFinishes(): {
  store: LaneStore;
  memory: MemoryLaneStore;
  finishes: Map<string, (error?: unknown) => void>;
  finishTickets: Map<string, LaneTicket>;
} {
  const finishes = new Map<string, (error?: unknown) => void>();
  const finishTickets = new Map<string, LaneTicket>();
  const memory = createMemoryLaneStore(createMemoryConversationStore());
  const store: LaneStore = {
    ...memory,
    finish: (ticket, job) =>
      new Promise<void>((resolve, reject) => {
        finishTickets.set(job.message.id, ticket);
        finishes.set(job.message.id, (error) => (error === undefined ? resolve() : reject(error)));
      }),
  };
  return { store, memory, finishes, finishTickets };
}

/** A queue on the memory store under the test's {@link claims}, running `run`. */
function memoryQueue(run: (job: Job) => Promise<JobOutcome>) {
  const memory = createMemoryLaneStore(createMemoryConversationStore());
  const ownership = claims();
  const queue = createJobQueue({ capacity: 10, store: memory, ownership, logger: createLogSink().logger, run });
  return { memory, ownership, queue };
}

describe("runs of a lane whose claim changed meanwhile", () => {
  it("does not start the job read again while its earlier run goes on, and reads the lane again after it", async () => {
    const { store, memory, finishes, finishTickets } = heldFinishes();
    const ownership = claims();
    const started: string[] = [];
    let running = 0;
    let most = 0;
    let release: () => void = () => undefined;
    const secondHeld = new Promise<void>((resolve) => {
      release = resolve;
    });
    const queue = createJobQueue({
      capacity: 10,
      store,
      ownership,
      logger: createLogSink().logger,
      run: async (job): Promise<JobOutcome> => {
        started.push(job.message.id);
        running += 1;
        most = Math.max(most, running);
        if (job.message.id === "second" && started.length === 2) await secondHeld;
        running -= 1;
        return { kind: "done", job };
      },
    });
    await queue.enqueue(message("first"));
    await queue.enqueue(message("second"));
    await waitFor(() => (started.includes("second") ? true : undefined), 2_000, "the second run");
    // The first job's delete is refused: another runner claimed the lane, which is let go of.
    finishes.get("first")?.(laneFencedError(KEY));
    await waitFor(() => (ownership.epoch === undefined ? true : undefined), 2_000, "the lane let go of");
    // This replica claims it again and reads the second job, whose first run still goes on.
    ownership.epoch = memory.takeOver();
    expect(queue.restore([jobOf("second")])).toBe(1);
    await new Promise((resolve) => setImmediate(resolve));
    expect(started).toEqual(["first", "second"]);

    release();
    // The run under the older claim ends, finished: its writes were all committed before the
    // newer claim, so it is not run again, its delete is made under that claim, and nothing else
    // of it is applied: the lane is read again.
    await waitFor(() => (ownership.rereads.length > 0 ? true : undefined), 2_000, "the lane read again");
    expect(ownership.rereads).toEqual([KEY]);
    expect(queue.size).toBe(0);
    expect(queue.restore([jobOf("second")])).toBe(0);
    expect(finishTickets.get("second")).toEqual({ key: KEY, epoch: ownership.epoch });
    expect(started).toEqual(["first", "second"]);
    expect(most).toBe(1);
    finishes.get("second")?.();
    await queue.drain(1_000);
  });

  it("settles nothing in memory for a run that ends after its lane was claimed again here", async () => {
    let release: () => void = () => undefined;
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    const { memory, ownership, queue } = memoryQueue(async (job) => {
      await held;
      // Without the claim it would wait here to run again, stale, under the new claim.
      return { kind: "retry", job: { ...job, attempts: 1 }, delayMs: 0 };
    });
    await queue.enqueue(message("only"));
    await new Promise((resolve) => setImmediate(resolve));
    ownership.epoch = memory.takeOver();
    release();
    await waitFor(() => (ownership.rereads.length > 0 ? true : undefined), 2_000, "the lane read again");
    expect(queue.size).toBe(0);
    await queue.drain(100);
  });

  it("runs again, once its conversation is dropped for a spent ticket, a job that finished here", async () => {
    const started: string[] = [];
    const { memory, ownership, queue } = memoryQueue(async (job) => {
      started.push(job.message.id);
      return { kind: "done", job };
    });
    await queue.enqueue(message("done-here"));
    await waitFor(() => (queue.size === 0 ? true : undefined), 2_000, "the job finished");
    // Read again before its delete is known: it finished here, so it is not run again.
    expect(queue.restore([jobOf("done-here")])).toBe(0);
    // Its delete may never be made under the spent ticket: dropped, the conversation runs it again.
    queue.drop(KEY);
    ownership.epoch = memory.takeOver();
    expect(queue.restore([jobOf("done-here")])).toBe(1);
    await waitFor(() => (started.length === 2 ? true : undefined), 2_000, "the job run again");
    await queue.drain(100);
  });
});
