/**
 * The timeline store contract's cases that prune, part of `TIMELINE_STORE_CASES`. A durable
 * store holds other cases' rows, and a prune's bounds are the whole store's: so these cases use
 * times no other case uses (long ago, or far ahead), clear what they leave, and look only at
 * their own messages. The large ones are far over their bound, so that a store that prunes in
 * batches goes through several, and their acceptance times tie in tens, so that a bound cutting
 * through a millisecond still keeps exactly what it says.
 */
import { expect } from "vitest";
import {
  accepted,
  freshChannel,
  MINUTE,
  subject,
  summed,
  type TimelineStoreCase,
  write,
} from "./timeline-contract-writes.js";

/** Messages of a large case: more than a few batches of any store. */
const MANY = 2_500;

/**
 * `MANY` messages of `channel` accepted from `at` on, ten per millisecond, with ids that sort
 * in the order they are written (so that a store keeping rows in the order written agrees).
 */
function many(channel: string, at: number) {
  const prefix = `m-${crypto.randomUUID()}`;
  return Array.from({ length: MANY }, (_, index) =>
    subject(channel, at + Math.floor(index / 10), "c1", `${prefix}-${String(index).padStart(5, "0")}`),
  );
}

/** The prune cases, in the order they run. */
export const TIMELINE_PRUNE_CASES: readonly TimelineStoreCase[] = [
  {
    name: "forgets messages accepted before a time, and minute counts before another",
    async run(store) {
      // Long ago: older than anything another case writes.
      const at = 1_000_000_000 + Math.floor(Math.random() * 1000) * MINUTE;
      const channel = freshChannel();
      const older = subject(channel, at);
      const newer = subject(channel, at + 2 * MINUTE);
      await store.write([older, newer].map(accepted), [
        { minute: at, series: "accepted", count: 1 },
        { minute: at + 2 * MINUTE, series: "accepted", count: 1 },
      ]);
      await store.prune({ before: at + MINUTE, keep: 1_000_000, minutesBefore: at + MINUTE });
      expect(await store.one(older.id)).toBeUndefined();
      expect((await store.one(newer.id))?.id).toBe(newer.id);
      const counts = summed(await store.activity(at));
      expect(counts.has(`${at} accepted`)).toBe(false);
      expect(counts.get(`${at + 2 * MINUTE} accepted`)).toBe(1);
    },
  },
  {
    name: "keeps at most the most recently accepted messages it is told to keep",
    async run(store, { parts }) {
      // Far ahead: newer than anything another case writes, so these are the ones kept.
      const at = Date.now() + 800 * 24 * 60 * MINUTE;
      const channel = freshChannel();
      const messages = [0, 1, 2, 3, 4, 5, 6, 7].map((offset) => subject(channel, at + offset));
      await store.write(messages.map(accepted), []);
      await store.prune({ before: 0, keep: 3, minutesBefore: 0 });
      const kept = (await store.page({ channel, limit: 100 })).map((row) => row.id);
      const newestFirst = messages.map((message) => message.id).reverse();
      if (parts === 1) {
        expect(kept).toEqual(newestFirst.slice(0, 3));
      } else {
        // Each part keeps its share of 3 (rounded up): never more than that share per part.
        expect(kept.length).toBeLessThanOrEqual(Math.ceil(3 / parts) * parts);
        expect(kept.length).toBeGreaterThan(0);
        expect(kept).toContain(newestFirst[0]);
      }
      await store.prune({ before: 0, keep: 0, minutesBefore: 0 });
      expect(await store.page({ channel, limit: 100 })).toEqual([]);
      expect(await store.one(messages[7]?.id ?? "")).toBeUndefined();
    },
  },
  {
    name: "forgets, far over its window, every message accepted before the window's start and none after",
    async run(store) {
      // Long ago: older than anything another case writes, the other window case's included.
      const at = 100_000_000 + Math.floor(Math.random() * 1000) * MINUTE;
      const channel = freshChannel();
      const messages = many(channel, at);
      await store.write(messages.map(accepted), []);
      const start = at + 120;
      await store.prune({ before: start, keep: 1_000_000, minutesBefore: 0 });
      const left = (await store.page({ channel, limit: MANY })).map((row) => row.id);
      expect(left).toEqual(
        messages
          .filter((message) => message.acceptedAt >= start)
          .map((message) => message.id)
          .reverse(),
      );
      await store.prune({ before: at + MANY, keep: 1_000_000, minutesBefore: 0 });
      expect(await store.page({ channel, limit: MANY })).toEqual([]);
    },
  },
  {
    name: "keeps exactly the messages it is told to keep of a timeline far over its bound, and none when told none",
    async run(store, { parts }) {
      // Far ahead: newer than anything another case writes, so these are the ones kept.
      const at = Date.now() + 900 * 24 * 60 * MINUTE;
      const channel = freshChannel();
      const messages = many(channel, at);
      await store.write(messages.map(accepted), []);
      // 95 cuts through a millisecond's ten messages.
      await store.prune({ before: 0, keep: 95, minutesBefore: 0 });
      const kept = (await store.page({ channel, limit: MANY })).map((row) => row.id);
      const newestFirst = messages.map((message) => message.id).reverse();
      if (parts === 1) {
        expect(kept).toEqual(newestFirst.slice(0, 95));
      } else {
        // Each part keeps its share (rounded up) of the most recent: at most that, and the newest.
        expect(kept.length).toBeLessThanOrEqual(Math.ceil(95 / parts) * parts);
        expect(kept.length).toBeGreaterThan(95 / 2);
        expect(kept).toContain(newestFirst[0]);
      }
      await store.prune({ before: 0, keep: 0, minutesBefore: 0 });
      expect(await store.page({ channel, limit: MANY })).toEqual([]);
    },
  },
  {
    name: "keeps a message accepted before the window but written within it (a replayed dead letter) until it is quiet as long",
    async run(store) {
      // Long ago, between the other cases' times; the size bound's cases ran before this one.
      const at = 1_200_000_000 + Math.floor(Math.random() * 1000) * MINUTE;
      const channel = freshChannel();
      const quiet = subject(channel, at);
      const replayed = subject(channel, at);
      await store.write([quiet, replayed].map(accepted), []);
      await store.write([write(replayed, [{ type: "replayed", at: at + 2 * MINUTE }], "replayed")], []);
      await store.prune({ before: at + MINUTE, keep: 1_000_000, minutesBefore: 0 });
      expect(await store.one(quiet.id)).toBeUndefined();
      expect((await store.one(replayed.id))?.events.map((event) => event.type)).toEqual(["accepted", "replayed"]);
      await store.prune({ before: at + 3 * MINUTE, keep: 1_000_000, minutesBefore: 0 });
      expect(await store.one(replayed.id)).toBeUndefined();
    },
  },
];
