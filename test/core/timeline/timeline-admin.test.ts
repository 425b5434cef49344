/**
 * What a message waits behind, as the admin API says it: a replay puts a message at its lane's
 * end, so it waits behind what was accepted before the replay, and what comes later waits behind it.
 */
import { describe, expect, it } from "vitest";
import type { Clock } from "../../../src/core/clock.js";
import { MemoryTimelineStore } from "../../../src/core/timeline/memory-timeline-store.js";
import { createTimelineAdmin } from "../../../src/core/timeline/timeline-admin.js";
import type { TimelineEvent } from "../../../src/core/timeline/timeline-event.js";
import type { TimelineWrite } from "../../../src/core/timeline/timeline-store.js";

const AT = Date.UTC(2026, 10, 30, 10, 0, 0);
const clockAt = (now: number): Clock => ({ now: () => now });

function write(
  id: string,
  acceptedAt: number,
  status: TimelineWrite["status"],
  events: TimelineEvent[],
): TimelineWrite {
  const updatedAt = events.at(-1)?.at ?? acceptedAt;
  return { id, channel: "webhook", conversationId: "alice", acceptedAt, status, updatedAt, events };
}

/** m1 dead-lettered, then m2 (held: the receiver is down) and m3 accepted, m1 replayed, m4 accepted. */
function lane(): MemoryTimelineStore {
  const store = new MemoryTimelineStore();
  const downUntil = AT + 60_000;
  store.write(
    [
      write("m1", AT, "dead_letter", [
        { type: "accepted", at: AT },
        { type: "dead_letter", at: AT + 1, error_code: "delivery_rejected", error: "400" },
      ]),
      write("m2", AT + 2, "waiting", [
        { type: "accepted", at: AT + 2 },
        { type: "waiting", at: AT + 3, reason: "receiver_down", until: downUntil },
      ]),
      write("m3", AT + 4, "accepted", [{ type: "accepted", at: AT + 4 }]),
      write("m1", AT, "replayed", [{ type: "replayed", at: AT + 10 }]),
      write("m4", AT + 20, "accepted", [{ type: "accepted", at: AT + 20 }]),
    ],
    [],
  );
  return store;
}

describe("the message a message waits behind", () => {
  it("puts a replayed message behind the last one accepted before its replay, not ahead of its lane", async () => {
    const admin = createTimelineAdmin(lane(), clockAt(AT + 30));
    expect((await admin.get("m1"))?.waiting).toEqual({ reason: "behind_message", behind_message_id: "m3" });
  });

  it("puts a message accepted after a replay behind the replayed one", async () => {
    const admin = createTimelineAdmin(lane(), clockAt(AT + 30));
    expect((await admin.get("m4"))?.waiting).toEqual({ reason: "behind_message", behind_message_id: "m1" });
  });

  it("keeps acceptance order among messages no replay moved", async () => {
    const admin = createTimelineAdmin(lane(), clockAt(AT + 30));
    expect((await admin.get("m3"))?.waiting).toEqual({ reason: "behind_message", behind_message_id: "m2" });
    expect((await admin.get("m2"))?.waiting).toMatchObject({ reason: "receiver_down" });
  });

  it("says a replayed message whose lane is otherwise empty is next in the queue", async () => {
    const store = new MemoryTimelineStore();
    store.write(
      [
        write("m1", AT, "dead_letter", [
          { type: "accepted", at: AT },
          { type: "dead_letter", at: AT + 1, error_code: "delivery_rejected", error: "400" },
        ]),
        write("m1", AT, "replayed", [{ type: "replayed", at: AT + 10 }]),
      ],
      [],
    );
    expect((await createTimelineAdmin(store, clockAt(AT + 30)).get("m1"))?.waiting).toEqual({ reason: "queued" });
  });
});
