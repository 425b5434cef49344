import { describe, expect, it } from "vitest";
import { MemoryTimelineStore } from "../../../src/core/timeline/memory-timeline-store.js";
import { createTimelineAdmin } from "../../../src/core/timeline/timeline-admin.js";
import { createTimelineRecorder } from "../../../src/core/timeline/timeline-recorder.js";
import { createLogSink } from "../../support/log-sink.js";

const T0 = Date.UTC(2026, 10, 29, 5, 0, 0);
const SUBJECT = { id: "m1", channel: "webhook", conversationId: "conv", acceptedAt: T0 };

describe("the timeline admin over a recorder of this process", () => {
  it("finds a message accepted a moment ago, which the recorder still holds, by writing what it holds first", async () => {
    const store = new MemoryTimelineStore();
    const clock = { now: () => T0 + 5 };
    const recorder = createTimelineRecorder({
      store,
      retention: { windowMs: 3_600_000, maxMessages: 100, keepText: false },
      clock,
      logger: createLogSink().logger,
      // No timer ever fires: only the read writes.
      schedule: () => undefined,
    });
    recorder.record(SUBJECT, [{ type: "accepted", at: T0 }], "accepted");
    const admin = createTimelineAdmin(store, clock, () => recorder.flush());
    expect((await admin.get("m1"))?.status).toBe("accepted");
    recorder.record({ ...SUBJECT, id: "m2", acceptedAt: T0 + 1 }, [{ type: "accepted", at: T0 + 1 }], "accepted");
    const page = await admin.list({ conversationId: "conv", limit: 10 });
    expect(page.items.map((item) => item.message_id)).toEqual(["m2", "m1"]);
  });
});
