/**
 * The shared delivery cases on outages: while the receiver is down every conversation waits
 * behind one probe, and when the runtime restarts nothing pending is lost; either way the
 * replies then go on in order. Defined for a runtime by delivery-cases-suite.ts; the harness
 * and helpers are in delivery-cases.ts.
 */
import { expect, it } from "vitest";
import {
  CASES_CIRCUIT_FAILURES,
  type DeliveryCaseContext,
  delivered,
  fresh,
  oneTo,
  texts,
  until,
} from "./delivery-cases.js";

/** Defines the outage cases, in the suite's `describe`; the restart only where {@link DeliveryCaseContext.restarts}. */
export function outageCases(context: DeliveryCaseContext): void {
  const { runtime, harness, timeoutMs, restarts } = context;
  it(
    "holds every conversation's replies while the receiver is down, probing one POST at a time, and resumes them in order when it is back",
    async () => {
      const h = harness();
      const conversations = Array.from({ length: 10 }, (_, index) => fresh(`outage${index}`));
      const mine = new Set(conversations);
      let outage = true;
      let wentDown = false;
      let downAt = 0;
      h.answer = (reply) => {
        if (!mine.has(reply.conversationId) || !outage) return 200;
        const failed = h.seen.filter((seen) => mine.has(seen.conversationId)).length + 1;
        if (failed === CASES_CIRCUIT_FAILURES) {
          wentDown = true;
          downAt = h.seen.length + 1;
        }
        return 503;
      };
      for (const conversationId of conversations) await h.send({ conversationId, text: "o1" });
      for (const conversationId of conversations) await h.send({ conversationId, text: "o2" });
      await until(() => wentDown, timeoutMs, "the receiver to go down");
      // Down: ten conversations would retry every 400 ms at most, 30 POSTs or more in the 1.2 s
      // window without the circuit; the probe alone posts, on the schedule (50 ms doubling to
      // 400 ms), one at a time: four at most in the window. A conversation that has not heard
      // yet (on Workers, one that posted nothing since the receiver went down, and so met no 503
      // of the outage) may still make one POST it started before, which reaches a loaded
      // receiver late: its first in the window is excused; any other retry is a probe's.
      await new Promise((resolve) => setTimeout(resolve, 600));
      const settled = h.seen.length;
      await new Promise((resolve) => setTimeout(resolve, 1_200));
      const heard = new Set(h.seen.slice(downAt, settled).map((seen) => seen.conversationId));
      const excused = new Set<string>();
      const retries = h.seen.slice(settled).filter((seen, index) => {
        const conversationId = seen.conversationId;
        if (!mine.has(conversationId)) return false;
        if (!h.seen.slice(0, settled + index).some((earlier) => earlier.conversationId === conversationId))
          return false;
        if (heard.has(conversationId) || excused.has(conversationId)) return true;
        excused.add(conversationId);
        return false;
      });
      expect(
        retries.length,
        `retries in the window: ${retries.map((seen) => seen.conversationId)}`,
      ).toBeLessThanOrEqual(4);
      outage = false;
      await until(
        () => conversations.every((conversationId) => delivered(h.seen, conversationId).length === 2),
        timeoutMs,
        "every conversation's two replies",
      );
      for (const conversationId of conversations) {
        const replies = delivered(h.seen, conversationId);
        expect(replies.map((reply) => [reply.text, reply.sequence])).toEqual([
          ["o1", 1],
          ["o2", 2],
        ]);
      }
    },
    timeoutMs * 3,
  );

  // Only where state survives a restart: the memory mode loses pending work by design.
  if (restarts)
    it(
      "loses nothing and keeps order when the runtime restarts with messages pending",
      async () => {
        const h = harness();
        const restart = h.restart;
        if (restart === undefined) throw new Error(`${runtime} was said to restart but its harness cannot`);
        const conversationId = fresh("restart");
        let down = true;
        h.answer = (reply) => (reply.conversationId === conversationId && down ? 503 : 200);
        for (const text of texts("r", 5)) await h.send({ conversationId, text });
        await until(
          () => h.seen.some((reply) => reply.conversationId === conversationId),
          timeoutMs,
          "a first attempt",
        );
        await restart();
        down = false;
        await until(() => delivered(h.seen, conversationId).length === 5, timeoutMs, "five delivered replies");

        const replies = delivered(h.seen, conversationId);
        expect(replies.map((reply) => reply.text)).toEqual(texts("r", 5));
        expect(replies.map((reply) => reply.sequence)).toEqual(oneTo(5));
        // Every attempt of one message carries the reply it was given first: the brain was not asked again.
        const ids = new Set(h.seen.filter((reply) => reply.conversationId === conversationId).map((reply) => reply.id));
        expect(ids.size).toBe(5);
      },
      timeoutMs * 4,
    );
}
