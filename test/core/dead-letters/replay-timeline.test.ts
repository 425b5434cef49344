/**
 * What a replay through the admin's dead letters records in the timeline: a `replayed` event
 * for exactly the letters the store took, over the core's memory store and recorder. Between
 * the admin's call and the store's replay, another admin call deletes or replays a letter (as
 * another request, or another replica, may); that letter must get no `replayed` of this replay.
 */
import { describe, expect, it } from "vitest";
import { createAdminDeadLetters } from "../../../src/core/dead-letters/create-admin-dead-letters.js";
import type { DeadLetter } from "../../../src/core/dead-letters/dead-letter.js";
import type { DeadLetterStore, ImmediateDeadLetterStore } from "../../../src/core/dead-letters/dead-letter-store.js";
import { createMemoryDeadLetterStore } from "../../../src/core/dead-letters/memory-dead-letter-store.js";
import type { Job } from "../../../src/core/lifecycle/job.js";
import { silentLogger } from "../../../src/core/log/logger.js";
import { MemoryTimelineStore } from "../../../src/core/timeline/memory-timeline-store.js";
import { createTimelineRecorder } from "../../../src/core/timeline/timeline-recorder.js";

const T0 = Date.UTC(2026, 10, 27, 5, 0, 0);
const CHANNEL = "webhook";

function letter(id: string, diedAt: number): DeadLetter {
  return {
    job: {
      message: {
        id,
        channel: CHANNEL,
        receivedAt: diedAt - 1_000,
        message: { senderId: "u1", conversationId: `conversation-${id}`, text: "hello" },
      },
      delivered: 0,
      attempts: 3,
    },
    error: { code: "upstream_rejected", message: "receiver answered 400", retryable: false, status: 400 },
    attempts: 3,
    diedAt,
  };
}

/**
 * Letters `ids` kept in a memory store whose queue takes at most `room` jobs, an admin over it
 * that records replays in a timeline, and what each message's timeline holds once written.
 */
function replaying(ids: readonly string[], room = Number.POSITIVE_INFINITY) {
  const queued: Job[] = [];
  const letters = createMemoryDeadLetterStore((job) => queued.length < room && queued.push(job) > 0);
  for (const [index, id] of ids.entries()) letters.keep(letter(id, T0 + index), 100);
  const timeline = new MemoryTimelineStore();
  const recorder = createTimelineRecorder({
    store: timeline,
    retention: { windowMs: 86_400_000, maxMessages: 1_000, keepText: false },
    clock: { now: () => T0 + 60_000 },
    logger: silentLogger,
    schedule: () => undefined,
  });
  const adminOver = (store: DeadLetterStore) => createAdminDeadLetters(store, { recorder, now: () => T0 + 60_000 });
  const replayedIds = async (): Promise<string[]> => {
    await recorder.flush();
    return ids.filter((id) => timeline.one(id)?.events.some((event) => event.type === "replayed") ?? false);
  };
  return { letters, queued, adminOver, replayedIds };
}

/** `store`, with `meanwhile` run when a replay is asked of it, before the replay itself. */
function withMeanwhile(store: ImmediateDeadLetterStore, meanwhile: () => void): DeadLetterStore {
  return {
    ...store,
    replay(filter) {
      meanwhile();
      return store.replay(filter);
    },
  };
}

describe("a replay through the admin's dead letters", () => {
  it("records 'replayed' for every letter of a bulk replay, and answers how many went", async () => {
    const { letters, queued, adminOver, replayedIds } = replaying(["a", "b", "c"]);
    expect(await adminOver(letters).replay({ channel: CHANNEL })).toBe(3);
    expect(queued.map((job) => job.message.id)).toEqual(["a", "b", "c"]);
    expect(await replayedIds()).toEqual(["a", "b", "c"]);
  });

  it("records no 'replayed' for a letter deleted between the admin's call and the replay", async () => {
    const { letters, queued, adminOver, replayedIds } = replaying(["a", "b", "c"]);
    const admin = adminOver(withMeanwhile(letters, () => letters.remove("b")));
    expect(await admin.replay({ channel: CHANNEL })).toBe(2);
    expect(queued.map((job) => job.message.id)).toEqual(["a", "c"]);
    expect(await replayedIds()).toEqual(["a", "c"]);
  });

  it("records no 'replayed' for a chosen letter another replay took first", async () => {
    const { letters, adminOver, replayedIds } = replaying(["a", "b"]);
    // The other replay runs where no timeline is recorded, so any "replayed" of "b" is this one's.
    const elsewhere = createAdminDeadLetters(letters);
    const admin = adminOver(withMeanwhile(letters, () => void elsewhere.replay({ ids: ["b"] })));
    expect(await admin.replay({ ids: ["a", "b"] })).toBe(1);
    expect(await replayedIds()).toEqual(["a"]);
  });

  it("records no 'replayed' for a letter the queue had no room for: it stays listed", async () => {
    const { letters, adminOver, replayedIds } = replaying(["a", "b", "c"], 1);
    expect(await adminOver(letters).replay({ channel: CHANNEL })).toBe(1);
    expect(await replayedIds()).toEqual(["a"]);
    expect(letters.page({ channel: CHANNEL, after: null, limit: 10 }).letters.map((stored) => stored.id)).toEqual([
      "b",
      "c",
    ]);
  });
});
