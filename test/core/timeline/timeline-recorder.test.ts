import { describe, expect, it, vi } from "vitest";
import { MemoryTimelineStore } from "../../../src/core/timeline/memory-timeline-store.js";
import {
  createTimelineRecorder,
  noTimeline,
  type TimelineRetention,
  timelineRetention,
} from "../../../src/core/timeline/timeline-recorder.js";
import type { TimelineStore } from "../../../src/core/timeline/timeline-store.js";
import { createLogSink } from "../../support/log-sink.js";

const T0 = Date.UTC(2026, 10, 27, 4, 0, 0);
const RETENTION: TimelineRetention = { windowMs: 3_600_000, maxMessages: 100, keepText: false };
const SUBJECT = { id: "m1", channel: "webhook", conversationId: "conv", acceptedAt: T0 };

/** A recorder whose timer is run by hand, over `store`. */
function recorderOver(store: TimelineStore, retention = RETENTION) {
  const tasks: (() => void)[] = [];
  let now = T0;
  const sink = createLogSink();
  const recorder = createTimelineRecorder({
    store,
    retention,
    clock: { now: () => now },
    logger: sink.logger,
    schedule: (task) => tasks.push(task),
  });
  return { recorder, tasks, sink, advance: (ms: number) => (now += ms) };
}

describe("the timeline recorder", () => {
  it("writes a message's acceptance and quick answer as one write, once its timer fires", async () => {
    const store = new MemoryTimelineStore();
    const writes: number[] = [];
    const counting: TimelineStore = {
      ...bound(store),
      write: (w, a) => {
        writes.push(w.length);
        store.write(w, a);
      },
    };
    const { recorder, tasks } = recorderOver(counting);
    recorder.record(SUBJECT, [{ type: "accepted", at: T0 }], "accepted");
    recorder.record(SUBJECT, [{ type: "delivered", at: T0 + 7 }], "delivered");
    // The quiet prune's timer, set at the start, and the one write's.
    expect(tasks).toHaveLength(2);
    expect(store.one("m1")).toBeUndefined();
    await recorder.flush();
    expect(writes).toEqual([1]);
    expect(store.one("m1")).toMatchObject({ status: "delivered", updatedAt: T0 + 7 });
    expect(store.one("m1")?.events.map((event) => event.type)).toEqual(["accepted", "delivered"]);
  });

  it("counts acceptances, retries, dead letters and deliveries per minute, with the delivery's latency", async () => {
    const store = new MemoryTimelineStore();
    const { recorder } = recorderOver(store);
    recorder.record(SUBJECT, [{ type: "accepted", at: T0 }], "accepted");
    recorder.record(
      SUBJECT,
      [{ type: "retry", at: T0 + 1, next_attempt_at: T0 + 2, error_code: "x", error: "y" }],
      "retrying",
    );
    recorder.record(SUBJECT, [{ type: "delivered", at: T0 + 100 }], "delivered");
    await recorder.flush();
    const series = store.activity(0).map((count) => `${count.series}=${count.count}`);
    expect(series.sort()).toEqual(["accepted=1", "delivered=1", "latency:21=1", "retrying=1"]);
  });

  it("drops the batches the store refuses, says so once, and says when it writes again", async () => {
    const store = new MemoryTimelineStore();
    let refuse = true;
    const flaky: TimelineStore = {
      ...bound(store),
      write: (w, a) => {
        if (refuse) throw new Error("disk full");
        store.write(w, a);
      },
    };
    const { recorder, sink } = recorderOver(flaky);
    for (const id of ["m1", "m0", "m00"]) {
      recorder.record({ ...SUBJECT, id }, [{ type: "accepted", at: T0 }], "accepted");
      await recorder.flush();
      // A flush with nothing gathered (the quiet timer's) writes nothing, so proves nothing.
      await recorder.flush();
    }
    const said = () =>
      sink.lines.filter((line) => String(line.msg).includes("message timeline")).map((line) => line.msg);
    expect(said()).toEqual(["cannot write the message timeline; its events are not kept until a write succeeds"]);
    refuse = false;
    recorder.record({ ...SUBJECT, id: "m2" }, [{ type: "accepted", at: T0 }], "accepted");
    await recorder.flush();
    expect(store.one("m1")).toBeUndefined();
    expect(store.one("m2")?.status).toBe("accepted");
    expect(sink.lines.at(-1)).toMatchObject({ msg: "the message timeline is written again", dropped_writes: 3 });
  });

  it("forgets what the retention no longer keeps, at most once a minute", async () => {
    const store = new MemoryTimelineStore();
    const { recorder, advance } = recorderOver(store, { ...RETENTION, maxMessages: 2 });
    for (const id of ["a", "b", "c"]) recorder.record({ ...SUBJECT, id }, [{ type: "accepted", at: T0 }], "accepted");
    await recorder.flush();
    expect(store.page({ limit: 10 })).toHaveLength(3);
    advance(60_000);
    recorder.record(
      { ...SUBJECT, id: "d", acceptedAt: T0 + 60_000 },
      [{ type: "accepted", at: T0 + 60_000 }],
      "accepted",
    );
    await recorder.flush();
    expect(store.page({ limit: 10 }).map((row) => row.id)).toEqual(["d", "c"]);
  });

  it("writes the events when only the prune fails, and says it was the prune", async () => {
    const store = new MemoryTimelineStore();
    const failingPrune: TimelineStore = {
      ...bound(store),
      prune: () => {
        throw new Error("statement timeout");
      },
    };
    const { recorder, sink, advance } = recorderOver(failingPrune);
    advance(60_000);
    recorder.record(SUBJECT, [{ type: "accepted", at: T0 }], "accepted");
    await recorder.flush();
    expect(store.one("m1")?.status).toBe("accepted");
    const messages = sink.lines.map((line) => String(line.msg));
    expect(messages.some((msg) => msg.includes("cannot prune the message timeline"))).toBe(true);
    expect(messages.some((msg) => msg.includes("cannot write the message timeline"))).toBe(false);
  });

  it("prunes on a timer of its own from the start, so a restarted service that gets nothing prunes", async () => {
    const store = new MemoryTimelineStore();
    store.write([{ ...SUBJECT, status: "delivered", updatedAt: T0, events: [{ type: "accepted", at: T0 }] }], []);
    const { tasks, advance } = recorderOver(store, { ...RETENTION, windowMs: 60_000 });
    expect(tasks).toHaveLength(1);
    advance(120_000);
    tasks[0]?.();
    await vi.waitFor(() => expect(store.one("m1")).toBeUndefined());
    // It sets itself again for the next quiet minute.
    expect(tasks).toHaveLength(2);
  });

  it("once closed, writes what it gathered, sets no timer again and drops later records", async () => {
    const store = new MemoryTimelineStore();
    const { recorder, tasks } = recorderOver(store);
    recorder.record(SUBJECT, [{ type: "accepted", at: T0 }], "accepted");
    await recorder.close();
    expect(store.one("m1")?.status).toBe("accepted");
    const timers = tasks.length;
    for (const task of [...tasks]) task();
    recorder.record({ ...SUBJECT, id: "m2" }, [{ type: "accepted", at: T0 }], "accepted");
    await recorder.flush();
    expect(tasks).toHaveLength(timers);
    expect(store.one("m2")).toBeUndefined();
  });

  it("keeps a message's outcome through a burst that fills the batch, dropping calls and attempts first", async () => {
    const store = new MemoryTimelineStore();
    const { recorder, sink } = recorderOver(store, { ...RETENTION, maxMessages: 1_000_000 });
    const attempt = { type: "attempt", at: T0, reply_id: "r", sequence: 1, ok: false, duration_ms: 1 } as const;
    for (let index = 0; index < 100_000; index += 1) recorder.record({ ...SUBJECT, id: `a${index}` }, [attempt], null);
    recorder.record({ ...SUBJECT, id: "late" }, [attempt], null);
    recorder.record(SUBJECT, [{ type: "delivered", at: T0 + 5 }], "delivered");
    await recorder.flush();
    expect(store.one("late")).toBeUndefined();
    expect(store.one("m1")?.status).toBe("delivered");
    expect(sink.lines.some((line) => String(line.msg).includes("events were dropped"))).toBe(true);
  });

  it("is off, recording nothing, when the retention window or bound is 0", () => {
    const store = new MemoryTimelineStore();
    expect(recorderOver(store, { ...RETENTION, windowMs: 0 }).recorder).toBe(noTimeline);
    expect(recorderOver(store, { ...RETENTION, maxMessages: 0 }).recorder).toBe(noTimeline);
    expect(timelineRetention({ retention_hours: 0, keep_text: false }, true).windowMs).toBe(0);
  });

  it("keeps a larger bound by default where state outlives the process", () => {
    const config = { retention_hours: 24, keep_text: false };
    expect(timelineRetention(config, false).maxMessages).toBeLessThan(timelineRetention(config, true).maxMessages);
    expect(timelineRetention({ ...config, max_messages: 5 }, true).maxMessages).toBe(5);
  });
});

/** The store's methods bound to it, so that a test may replace one. */
function bound(store: MemoryTimelineStore): TimelineStore {
  return {
    write: (writes, activity) => store.write(writes, activity),
    one: (id) => store.one(id),
    page: (query) => store.page(query),
    activity: (since) => store.activity(since),
    prune: (limits) => store.prune(limits),
  };
}
