/**
 * The shared delivery cases on order and isolation: a conversation's replies arrive in the
 * order their messages were accepted, across a retry, and one conversation held back by its
 * receiver (refusing or hanging) holds back no other. Defined for a runtime by
 * delivery-cases-suite.ts; the harness and helpers are in delivery-cases.ts.
 */
import { expect, it } from "vitest";
import {
  type DeliveryCaseContext,
  delivered,
  fresh,
  oneTo,
  type SeenReply,
  texts,
  UNANSWERED,
  until,
} from "./delivery-cases.js";

/** Defines the order and isolation cases, in the suite's `describe`. */
export function orderCases(context: DeliveryCaseContext): void {
  const { harness, timeoutMs } = context;
  it(
    "keeps acceptance order across a retry: ten messages, the third reply fails once",
    async () => {
      const h = harness();
      const conversationId = fresh("order");
      h.answer = (reply, attempt) =>
        reply.conversationId === conversationId && reply.text === "m3" && attempt === 1 ? 503 : 200;
      for (const text of texts("m", 10)) await h.send({ conversationId, text });
      await until(() => delivered(h.seen, conversationId).length === 10, timeoutMs, "ten delivered replies");

      const replies = delivered(h.seen, conversationId);
      expect(replies.map((reply) => reply.text)).toEqual(texts("m", 10));
      expect(replies.map((reply) => reply.sequence)).toEqual(oneTo(10));
      const third = h.seen.filter((reply) => reply.conversationId === conversationId && reply.text === "m3");
      expect(third.map((reply) => reply.status)).toEqual([503, 200]);
    },
    timeoutMs * 2,
  );

  it(
    "holds back only the conversation whose reply keeps failing: the other keeps flowing",
    async () => {
      const h = harness();
      const blocked = fresh("blocked");
      const flowing = fresh("flowing");
      // The blocked conversation's receiver fails until the other one got all its replies.
      h.answer = (reply) => (reply.conversationId === blocked && delivered(h.seen, flowing).length < 5 ? 503 : 200);
      for (const text of texts("b", 2)) await h.send({ conversationId: blocked, text });
      for (const text of texts("f", 5)) await h.send({ conversationId: flowing, text });
      await until(() => delivered(h.seen, blocked).length === 2, timeoutMs, "the blocked conversation's replies");

      const flowed = delivered(h.seen, flowing);
      expect(flowed.map((reply) => [reply.text, reply.sequence])).toEqual(
        texts("f", 5).map((text, i) => [text, i + 1]),
      );
      const unblocked = delivered(h.seen, blocked);
      expect(unblocked.map((reply) => [reply.text, reply.sequence])).toEqual([
        ["b1", 1],
        ["b2", 2],
      ]);
      const firstBlockedSuccess = h.seen.indexOf(unblocked[0] as SeenReply);
      const lastFlowing = h.seen.indexOf(flowed[4] as SeenReply);
      expect(lastFlowing).toBeLessThan(firstBlockedSuccess);
      // b1 was refused at least once, and b2 was never tried before b1 got through.
      expect(
        h.seen.some((reply) => reply.text === "b1" && reply.conversationId === blocked && reply.status === 503),
      ).toBe(true);
      const firstB2 = h.seen.findIndex((reply) => reply.conversationId === blocked && reply.text === "b2");
      expect(firstB2).toBeGreaterThan(firstBlockedSuccess);
    },
    timeoutMs * 2,
  );

  it(
    "holds back only the conversation whose receiver hangs: five others are answered while its POST waits",
    async () => {
      const h = harness();
      const hanging = fresh("hanging");
      const others = Array.from({ length: 5 }, (_, index) => fresh(`beside${index}`));
      const othersAnswered = () => others.every((conversationId) => delivered(h.seen, conversationId).length === 1);
      // The hanging conversation's receiver leaves its POSTs unanswered until the others got theirs.
      h.answer = (reply) => (reply.conversationId === hanging && !othersAnswered() ? "hang" : 200);
      await h.send({ conversationId: hanging, text: "h1" });
      await h.send({ conversationId: hanging, text: "h2" });
      await until(() => h.seen.some((reply) => reply.conversationId === hanging), timeoutMs, "the hanging POST");
      for (const conversationId of others) await h.send({ conversationId, text: "o1" });
      await until(othersAnswered, timeoutMs, "the other conversations' replies");

      // All of them while the first POST still hung: it is tried again only once it timed out.
      const tried = h.seen.filter((reply) => reply.conversationId === hanging);
      expect(tried.map((reply) => [reply.text, reply.status])).toEqual([["h1", UNANSWERED]]);
      for (const conversationId of others) {
        expect(delivered(h.seen, conversationId).map((reply) => [reply.text, reply.sequence])).toEqual([["o1", 1]]);
      }
      await until(() => delivered(h.seen, hanging).length === 2, timeoutMs, "the hanging conversation's replies");
      expect(delivered(h.seen, hanging).map((reply) => [reply.text, reply.sequence])).toEqual([
        ["h1", 1],
        ["h2", 2],
      ]);
    },
    timeoutMs * 3,
  );
}
