/**
 * The behaviour every {@link TimelineStore} shares, as one table of cases run against each
 * implementation (memory on Node; the Durable Object shards inside workerd, one shard and
 * several). Runtime-neutral: no `node:` or `cloudflare:` imports, so it runs on Node and inside
 * workerd alike.
 *
 * A durable store may hold other tests' rows, so every case writes messages of a channel of its
 * own and reads pages of that channel only; the cases that prune use times no other case uses
 * (long ago, or far ahead) and look only at their own messages.
 */
import { describe, expect, it } from "vitest";
import type { TimelineEvent } from "../../../src/core/timeline/timeline-event.js";
import type { TimelineStore } from "../../../src/core/timeline/timeline-store.js";
import {
  accepted,
  freshChannel,
  MINUTE,
  subject,
  summed,
  type TimelineStoreCase,
  type TimelineStoreOptions,
  write,
} from "./timeline-contract-writes.js";
import { TIMELINE_PRUNE_CASES } from "./timeline-prune-cases.js";

export type { TimelineStoreCase, TimelineStoreOptions } from "./timeline-contract-writes.js";

/** The cases, in the order they run. */
export const TIMELINE_STORE_CASES: readonly TimelineStoreCase[] = [
  {
    name: "knows nothing of a message it was never told of",
    async run(store) {
      expect(await store.one(`m-${crypto.randomUUID()}`)).toBeUndefined();
    },
  },
  {
    name: "appends a message's events across writes and hands them back oldest first",
    async run(store) {
      const at = Date.now();
      const message = subject(freshChannel(), at);
      await store.write([accepted(message)], []);
      const run: TimelineEvent[] = [
        { type: "attempt", at: at + 30, reply_id: "r1", sequence: 1, ok: true, duration_ms: 5, status: 200 },
        { type: "brain_call", at: at + 10, brain: "echo", fallback: false, ok: true, duration_ms: 1 },
        { type: "reply", at: at + 20, reply_id: "r1", sequence: 1 },
      ];
      await store.write([write(message, run, null)], []);
      await store.write([write(message, [{ type: "delivered", at: at + 40 }], "delivered")], []);
      const row = await store.one(message.id);
      expect(row).toEqual({
        ...message,
        status: "delivered",
        updatedAt: at + 40,
        events: [accepted(message).events[0], run[1], run[2], run[0], { type: "delivered", at: at + 40 }],
      });
    },
  },
  {
    name: "keeps an event's text as it was written, whatever its characters",
    async run(store) {
      const at = Date.now();
      const message = subject(freshChannel(), at);
      const text =
        'quotes " and \\" , backslash \\ , {braces}, NUL \u0000, record separator \u001e, tab \t, line\nbreak, ü, 🦆';
      const events: TimelineEvent[] = [
        { type: "accepted", at, text },
        { type: "reply", at: at + 1, reply_id: "r1", sequence: 1, text },
      ];
      await store.write([write(message, events, "accepted")], []);
      expect((await store.one(message.id))?.events).toEqual(events);
    },
  },
  {
    name: "creates the row from whichever write comes first, and an older status does not undo a newer one",
    async run(store) {
      const at = Date.now();
      const message = subject(freshChannel(), at);
      // The run's settlement lands before the acceptance (two writers, out of order).
      await store.write([write(message, [{ type: "delivered", at: at + 500 }], "delivered")], []);
      await store.write([accepted(message)], []);
      const row = await store.one(message.id);
      expect(row?.status).toBe("delivered");
      expect(row?.updatedAt).toBe(at + 500);
      expect(row?.acceptedAt).toBe(at);
      expect(row?.events.map((event) => event.type)).toEqual(["accepted", "delivered"]);
    },
  },
  {
    name: "moves the status only with a write that has one and is no older than the row",
    async run(store) {
      const at = Date.now();
      const message = subject(freshChannel(), at);
      await store.write([accepted(message)], []);
      const retry: TimelineEvent = {
        type: "retry",
        at: at + 200,
        next_attempt_at: at + 1200,
        error_code: "e",
        error: "e",
      };
      await store.write([write(message, [retry], "retrying")], []);
      await store.write(
        [write(message, [{ type: "waiting", at: at + 100, reason: "receiver_down", until: at + 900 }], "waiting")],
        [],
      );
      expect((await store.one(message.id))?.status).toBe("retrying");
      // Events without a status leave it, but move the time on.
      const call: TimelineEvent = {
        type: "brain_call",
        at: at + 300,
        brain: "echo",
        fallback: false,
        ok: true,
        duration_ms: 1,
      };
      await store.write([write(message, [call], null)], []);
      expect(await store.one(message.id)).toMatchObject({ status: "retrying", updatedAt: at + 300 });
      // A status as old as the row's time moves it.
      await store.write([write(message, [{ type: "delivered", at: at + 300 }], "delivered")], []);
      expect(await store.one(message.id)).toMatchObject({ status: "delivered", updatedAt: at + 300 });
    },
  },
  {
    name: "writes many messages in one write",
    async run(store) {
      const channel = freshChannel();
      const at = Date.now();
      const messages = [0, 1, 2].map((offset) => subject(channel, at + offset, `c${offset}`));
      await store.write(messages.map(accepted), []);
      for (const message of messages)
        expect((await store.one(message.id))?.conversationId).toBe(message.conversationId);
      expect((await store.page({ channel, limit: 10 })).map((row) => row.id)).toEqual(
        messages.map((message) => message.id).reverse(),
      );
    },
  },
  {
    name: "pages newest first by acceptance, then by id, from where the last page ended",
    async run(store) {
      const channel = freshChannel();
      const at = Date.now();
      const tied = at + 5;
      const messages = [
        subject(channel, at + 1),
        subject(channel, tied, "c1", `a-${crypto.randomUUID()}`),
        subject(channel, tied, "c1", `b-${crypto.randomUUID()}`),
        subject(channel, at + 3),
        subject(channel, at + 9),
      ];
      await store.write(messages.map(accepted), []);
      const order = [messages[4], messages[2], messages[1], messages[3], messages[0]].map((message) => message?.id);
      const seen: (string | undefined)[] = [];
      let before: { acceptedAt: number; id: string } | undefined;
      for (;;) {
        const page = await store.page({ channel, before, limit: 2 });
        expect(page.length).toBeLessThanOrEqual(2);
        seen.push(...page.map((row) => row.id));
        const last = page.at(-1);
        if (page.length < 2 || last === undefined) break;
        before = { acceptedAt: last.acceptedAt, id: last.id };
      }
      expect(seen).toEqual(order);
      const [first] = await store.page({ channel, limit: 1 });
      expect(first).toEqual({ ...messages[4], status: "accepted", updatedAt: at + 9 });
    },
  },
  {
    name: "filters a page by channel, conversation, status and acceptance time",
    async run(store) {
      const channel = freshChannel();
      const at = Date.now();
      const old = subject(channel, at - 10 * MINUTE, "c1");
      const mine = subject(channel, at, "c1");
      const other = subject(channel, at + 1, "c2");
      const elsewhere = subject(freshChannel(), at + 2, "c1");
      await store.write([old, mine, other, elsewhere].map(accepted), []);
      await store.write([write(mine, [{ type: "delivered", at: at + 50 }], "delivered")], []);
      const ids = async (query: Parameters<TimelineStore["page"]>[0]) => (await store.page(query)).map((row) => row.id);
      expect(await ids({ channel, conversationId: "c1", limit: 10 })).toEqual([mine.id, old.id]);
      expect(await ids({ channel, status: "delivered", limit: 10 })).toEqual([mine.id]);
      expect(await ids({ channel, status: "accepted", limit: 10 })).toEqual([other.id, old.id]);
      expect(await ids({ channel, since: at, limit: 10 })).toEqual([other.id, mine.id]);
      expect(await ids({ channel, conversationId: "c3", limit: 10 })).toEqual([]);
    },
  },
  {
    name: "adds minute counts and reads those from a time on",
    async run(store) {
      // Minutes far ahead, which no other case counts in.
      const minute =
        Math.floor((Date.now() + 400 * 24 * 60 * MINUTE) / MINUTE) * MINUTE + Math.floor(Math.random() * 1000) * MINUTE;
      const message = subject(freshChannel(), minute);
      await store.write(
        [accepted(message)],
        [
          { minute, series: "accepted", count: 1 },
          { minute: minute - MINUTE, series: "accepted", count: 4 },
        ],
      );
      await store.write(
        [],
        [
          { minute, series: "accepted", count: 2 },
          { minute, series: "latency:31", count: 1 },
        ],
      );
      const counts = summed(await store.activity(minute));
      expect(counts.get(`${minute} accepted`)).toBe(3);
      expect(counts.get(`${minute} latency:31`)).toBe(1);
      expect(counts.has(`${minute - MINUTE} accepted`)).toBe(false);
      expect(summed(await store.activity(minute - MINUTE)).get(`${minute - MINUTE} accepted`)).toBe(4);
    },
  },
  ...TIMELINE_PRUNE_CASES,
];

/** Registers {@link TIMELINE_STORE_CASES} against the store `make` gives, one test each. */
export function timelineStoreContract(
  name: string,
  make: () => TimelineStore | Promise<TimelineStore>,
  options: TimelineStoreOptions = {},
): void {
  describe(`TimelineStore contract: ${name}`, () => {
    for (const testCase of TIMELINE_STORE_CASES) {
      it(testCase.name, async () => {
        await testCase.run(await make(), { parts: options.parts ?? 1 });
      });
    }
  });
}
