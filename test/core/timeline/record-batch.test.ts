import { describe, expect, it } from "vitest";
import { RecordBatch } from "../../../src/core/timeline/record-batch.js";

const T0 = Date.UTC(2026, 10, 27, 7, 0, 30);
const subject = (id: string) => ({ id, channel: "webhook", conversationId: `c-${id}`, acceptedAt: T0 });

describe("a batch of timeline records", () => {
  it("takes interleaved records as one write per message, in the order messages were first recorded", () => {
    const batch = new RecordBatch();
    batch.push(subject("a"), [{ type: "accepted", at: T0 }], "accepted");
    batch.push(subject("b"), [{ type: "accepted", at: T0 }], "accepted");
    batch.push(
      subject("a"),
      [{ type: "brain_call", at: T0 + 1, brain: "echo", fallback: false, ok: true, duration_ms: 0 }],
      null,
    );
    batch.push(
      subject("b"),
      [{ type: "retry", at: T0 + 2, next_attempt_at: T0 + 9, error_code: "x", error: "y" }],
      "retrying",
    );
    batch.push(subject("a"), [{ type: "delivered", at: T0 + 40_000 }], "delivered");
    expect(batch.size).toBe(5);
    const { writes, counts } = batch.take();
    expect(
      writes.map((write) => [write.id, write.status, write.updatedAt, write.events.map((event) => event.type)]),
    ).toEqual([
      ["a", "delivered", T0 + 40_000, ["accepted", "brain_call", "delivered"]],
      ["b", "retrying", T0 + 2, ["accepted", "retry"]],
    ]);
    // The delivery falls in the next minute: each count is in its event's minute.
    const minute = Math.floor(T0 / 60_000) * 60_000;
    expect(counts.map((count) => [count.minute - minute, count.series, count.count]).sort()).toEqual(
      [
        [0, "accepted", 2],
        [0, "retrying", 1],
        [60_000, "delivered", 1],
        [60_000, "latency:48", 1],
      ].sort(),
    );
    expect(batch.size).toBe(0);
    expect(batch.take()).toEqual({ writes: [], counts: [] });
  });

  it("keeps a record that changes nothing from erasing the status an earlier one gave", () => {
    const batch = new RecordBatch();
    batch.push(subject("a"), [{ type: "dead_letter", at: T0, error_code: "x", error: "y" }], "dead_letter");
    batch.push(
      subject("a"),
      [{ type: "attempt", at: T0, reply_id: "r", sequence: 1, ok: false, duration_ms: 1 }],
      null,
    );
    expect(batch.take().writes[0]?.status).toBe("dead_letter");
  });
});
