/**
 * The behaviour every {@link TimelineStore} shares, as one suite run against each implementation
 * (memory, SQLite, Postgres, the Durable Object). Runtime-neutral: no `node:` or `cloudflare:`
 * imports, so it runs on Node and inside workerd alike.
 */
import { describe, expect, it } from "vitest";
import type { TimelineEvent } from "../../../src/core/timeline/timeline-event.js";
import type { TimelineStore, TimelineWrite } from "../../../src/core/timeline/timeline-store.js";

/** A fresh, empty store for one case. */
export type TimelineStoreFactory = () => TimelineStore | Promise<TimelineStore>;

const T0 = Date.UTC(2026, 10, 27, 4, 0, 0);

function write(
  id: string,
  events: readonly TimelineEvent[],
  status: TimelineWrite["status"],
  extra: Partial<TimelineWrite> = {},
): TimelineWrite {
  const updatedAt = Math.max(extra.acceptedAt ?? T0, ...events.map((event) => event.at));
  return { id, channel: "c", conversationId: "conv", acceptedAt: T0, status, updatedAt, events, ...extra };
}

/** Registers the suite for `name`. */
export function timelineStoreContract(name: string, open: TimelineStoreFactory): void {
  describe(`TimelineStore contract: ${name}`, () => {
    it("keeps a message's events in time order and its status from the latest write that has one", async () => {
      const store = await open();
      await store.write([write("m1", [{ type: "accepted", at: T0, client_address: "10.0.0.1" }], "accepted")], []);
      await store.write(
        [
          write(
            "m1",
            [
              { type: "brain_call", at: T0 + 5, brain: "echo", fallback: false, ok: true, duration_ms: 1 },
              { type: "delivered", at: T0 + 9 },
            ],
            "delivered",
          ),
        ],
        [],
      );
      const row = await store.one("m1");
      expect(row?.status).toBe("delivered");
      expect(row?.updatedAt).toBe(T0 + 9);
      expect(row?.events.map((event) => event.type)).toEqual(["accepted", "brain_call", "delivered"]);
      expect(row?.events[0]).toEqual({ type: "accepted", at: T0, client_address: "10.0.0.1" });
      expect(await store.one("unknown")).toBeUndefined();
    });

    it("lets a late write of an earlier event add to the events without moving the status back", async () => {
      const store = await open();
      // Another replica ran the message before the accepting one wrote its acceptance.
      await store.write([write("m1", [{ type: "delivered", at: T0 + 20 }], "delivered")], []);
      await store.write([write("m1", [{ type: "accepted", at: T0 }], "accepted")], []);
      // A run's events without a settlement change nothing of the status.
      await store.write([write("m1", [{ type: "replayed", at: T0 + 30 }], null)], []);
      const row = await store.one("m1");
      expect(row?.status).toBe("delivered");
      expect(row?.updatedAt).toBe(T0 + 30);
      expect(row?.events.map((event) => event.type)).toEqual(["accepted", "delivered", "replayed"]);
    });

    it("pages newest first by acceptance, filtered by conversation, channel, status and time", async () => {
      const store = await open();
      const writes: TimelineWrite[] = [];
      for (let index = 0; index < 7; index += 1) {
        writes.push(
          write(`m${index}`, [{ type: "accepted", at: T0 + index }], index % 2 === 0 ? "accepted" : "delivered", {
            acceptedAt: T0 + index,
            conversationId: index < 5 ? "a" : "b",
            channel: index === 6 ? "other" : "c",
          }),
        );
      }
      await store.write(writes, []);
      const ids = async (query: Parameters<TimelineStore["page"]>[0]) => (await store.page(query)).map((row) => row.id);
      expect(await ids({ limit: 3 })).toEqual(["m6", "m5", "m4"]);
      expect(await ids({ limit: 3, before: { acceptedAt: T0 + 4, id: "m4" } })).toEqual(["m3", "m2", "m1"]);
      expect(await ids({ limit: 10, conversationId: "a" })).toEqual(["m4", "m3", "m2", "m1", "m0"]);
      expect(await ids({ limit: 10, conversationId: "a", status: "delivered" })).toEqual(["m3", "m1"]);
      expect(await ids({ limit: 10, channel: "other" })).toEqual(["m6"]);
      expect(await ids({ limit: 10, since: T0 + 5 })).toEqual(["m6", "m5"]);
      const [first] = await store.page({ limit: 1, conversationId: "b" });
      expect(first).toEqual({
        id: "m6",
        channel: "other",
        conversationId: "b",
        status: "accepted",
        acceptedAt: T0 + 6,
        updatedAt: T0 + 6,
      });
    });

    it("orders messages accepted in the same millisecond by id, so a cursor skips none", async () => {
      const store = await open();
      await store.write(
        ["x", "z", "y"].map((id) => write(id, [{ type: "accepted", at: T0 }], "accepted")),
        [],
      );
      expect((await store.page({ limit: 2 })).map((row) => row.id)).toEqual(["z", "y"]);
      expect((await store.page({ limit: 2, before: { acceptedAt: T0, id: "y" } })).map((row) => row.id)).toEqual(["x"]);
    });

    it("adds minute counts and reads them from a time on", async () => {
      const store = await open();
      await store.write(
        [],
        [
          { minute: T0, series: "accepted", count: 2 },
          { minute: T0 + 60_000, series: "accepted", count: 1 },
        ],
      );
      await store.write([], [{ minute: T0, series: "accepted", count: 3 }]);
      const counts = await store.activity(T0);
      expect([...counts].sort((a, b) => a.minute - b.minute)).toEqual([
        { minute: T0, series: "accepted", count: 5 },
        { minute: T0 + 60_000, series: "accepted", count: 1 },
      ]);
      expect(await store.activity(T0 + 60_000)).toEqual([{ minute: T0 + 60_000, series: "accepted", count: 1 }]);
    });

    it("forgets messages past the window, beyond the bound, and old minutes", async () => {
      const store = await open();
      await store.write(
        [0, 1, 2, 3, 4].map((index) =>
          write(`m${index}`, [{ type: "accepted", at: T0 + index * 1000 }], "accepted", {
            acceptedAt: T0 + index * 1000,
          }),
        ),
        [
          { minute: T0 - 60_000, series: "accepted", count: 1 },
          { minute: T0, series: "accepted", count: 1 },
        ],
      );
      await store.prune({ before: T0 + 1000, keep: 3, minutesBefore: T0 });
      expect((await store.page({ limit: 10 })).map((row) => row.id)).toEqual(["m4", "m3", "m2"]);
      expect(await store.one("m0")).toBeUndefined();
      expect(await store.activity(0)).toEqual([{ minute: T0, series: "accepted", count: 1 }]);
      await store.prune({ before: T0 + 3500, keep: 10, minutesBefore: T0 });
      expect((await store.page({ limit: 10 })).map((row) => row.id)).toEqual(["m4"]);
    });
  });
}
