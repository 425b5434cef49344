import { describe, expect, it } from "vitest";
import { MemoryTimelineStore } from "../../../src/core/timeline/memory-timeline-store.js";
import type { TimelineWrite } from "../../../src/core/timeline/timeline-store.js";

const T0 = Date.UTC(2026, 10, 27, 7, 0, 0);

/** The acceptance of message `index`, written alone, as the recorder writes in memory. */
const accepted = (index: number): TimelineWrite => ({
  id: `m${String(index).padStart(6, "0")}`,
  channel: "webhook",
  conversationId: `c${index % 7}`,
  acceptedAt: T0 + index,
  status: "accepted",
  updatedAt: T0 + index,
  events: [{ type: "accepted", at: T0 + index }],
});

describe("the in-memory timeline store", () => {
  it("keeps a handed-over write as it is: a later write of the message changes neither it nor its events", () => {
    const store = new MemoryTimelineStore();
    const first = accepted(1);
    store.write([first], []);
    const later: TimelineWrite = {
      ...first,
      status: null,
      updatedAt: T0 + 9,
      events: [{ type: "delivered", at: T0 + 9 }],
    };
    store.write([later], []);
    expect(first).toEqual(accepted(1));
    expect(store.one(first.id)).toMatchObject({ status: "accepted", updatedAt: T0 + 9 });
    expect(store.one(first.id)?.events.map((event) => event.type)).toEqual(["accepted", "delivered"]);
    // A write that sets no status becomes a row of its own, "accepted".
    store.write([{ ...accepted(2), status: null }], []);
    expect(store.one("m000002")?.status).toBe("accepted");
  });

  it("holds its bound on kept text at every write, dropping the oldest messages, the newest always kept", () => {
    const store = new MemoryTimelineStore(Number.POSITIVE_INFINITY, 10);
    const withText = (index: number, text: string): TimelineWrite => ({
      ...accepted(index),
      events: [{ type: "accepted", at: T0 + index, text }],
    });
    store.write([withText(0, "aaaa"), withText(1, "bbbb")], []);
    expect(store.page({ limit: 10 })).toHaveLength(2);
    store.write([withText(2, "cccc")], []);
    expect(store.page({ limit: 10 }).map((row) => row.id)).toEqual(["m000002", "m000001"]);
    store.write([withText(3, "d".repeat(50))], []);
    expect(store.page({ limit: 10 }).map((row) => row.id)).toEqual(["m000003"]);
    // Over the bound alone, it goes with the next message; text-less ones cost the bound nothing.
    for (let index = 4; index < 20; index += 1) store.write([accepted(index)], []);
    expect(store.page({ limit: 100 })).toHaveLength(16);
    expect(store.one("m000003")).toBeUndefined();
  });

  it("holds its bound at every write, one message at a time, dropping the oldest", () => {
    const store = new MemoryTimelineStore(100);
    for (let index = 0; index < 5_000; index += 1) store.write([accepted(index)], []);
    const kept = store.page({ limit: 1_000 }).map((row) => row.id);
    expect(kept).toHaveLength(100);
    expect(kept[0]).toBe("m004999");
    expect(kept.at(-1)).toBe("m004900");
    expect(store.one("m004899")).toBeUndefined();
  });

  it("keeps a message's later events with it, and still drops by creation order after a prune", () => {
    const store = new MemoryTimelineStore(3);
    for (let index = 0; index < 4; index += 1) store.write([accepted(index)], []);
    store.write(
      [{ ...accepted(2), status: "delivered", updatedAt: T0 + 50, events: [{ type: "delivered", at: T0 + 50 }] }],
      [],
    );
    expect(store.one("m000002")).toMatchObject({ status: "delivered", updatedAt: T0 + 50 });
    expect(store.one("m000002")?.events.map((event) => event.type)).toEqual(["accepted", "delivered"]);
    store.prune({ before: T0 + 2, keep: 3, minutesBefore: 0 });
    store.write([accepted(4), accepted(5)], []);
    expect(store.page({ limit: 10 }).map((row) => row.id)).toEqual(["m000005", "m000004", "m000003"]);
  });

  it("after a prune, drops by creation order what is left: a message written again is not dropped early", () => {
    const store = new MemoryTimelineStore(3);
    for (let index = 0; index < 3; index += 1) store.write([accepted(index)], []);
    store.prune({ before: T0 + 2, keep: 3, minutesBefore: 0 });
    expect(store.page({ limit: 10 }).map((row) => row.id)).toEqual(["m000002"]);
    // A late event of a pruned message makes its row again, the newest in creation order.
    store.write([{ ...accepted(0), status: "delivered", events: [{ type: "delivered", at: T0 + 9 }] }], []);
    store.write([accepted(3), accepted(4)], []);
    expect(store.one("m000000")?.status).toBe("delivered");
    expect(store.one("m000002")).toBeUndefined();
  });
});
