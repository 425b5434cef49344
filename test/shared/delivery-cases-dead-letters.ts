/**
 * The shared delivery cases on dead letters: a reply the receiver refuses (4xx) is not retried
 * and does not block its conversation, and a replayed dead letter joins the end of its lane.
 * Defined for a runtime by delivery-cases-suite.ts; the harness and helpers are in
 * delivery-cases.ts.
 */
import { expect, it } from "vitest";
import { type DeliveryCaseContext, delivered, fresh, replayDeadLetter, texts, until } from "./delivery-cases.js";

/** Defines the dead-letter cases, in the suite's `describe`. */
export function deadLetterCases(context: DeliveryCaseContext): void {
  const { harness, timeoutMs } = context;
  it(
    "lets a dead letter unblock the next message",
    async () => {
      const h = harness();
      const conversationId = fresh("dead");
      h.answer = (reply) => (reply.conversationId === conversationId && reply.text === "d1" ? 400 : 200);
      for (const text of texts("d", 3)) await h.send({ conversationId, text });
      await until(() => delivered(h.seen, conversationId).length === 2, timeoutMs, "the replies after the dead one");

      const mine = h.seen.filter((reply) => reply.conversationId === conversationId);
      // A 400 is not retried: one attempt, then the next message goes. The dead reply keeps
      // its sequence number, so the receiver sees where a reply was lost.
      expect(mine.map((reply) => [reply.text, reply.sequence, reply.status])).toEqual([
        ["d1", 1, 400],
        ["d2", 2, 200],
        ["d3", 3, 200],
      ]);
    },
    timeoutMs * 2,
  );

  it(
    "runs a replayed dead letter at the end of its lane, after a reply in retry and the jobs behind it, with the next sequence",
    async () => {
      const h = harness();
      const conversationId = fresh("replay");
      let refusing = true;
      let failing = true;
      h.answer = (reply) => {
        if (reply.conversationId !== conversationId) return 200;
        if (reply.text === "dead") return refusing ? 400 : 200;
        if (reply.text === "retry") return failing ? 503 : 200;
        return 200;
      };
      const deadId = await h.send({ conversationId, text: "dead" });
      await h.send({ conversationId, text: "retry" });
      await h.send({ conversationId, text: "w1" });
      await h.send({ conversationId, text: "w2" });
      await until(
        () => h.seen.some((reply) => reply.conversationId === conversationId && reply.text === "retry"),
        timeoutMs,
        "the reply in retry",
      );
      await replayDeadLetter(h, deadId, timeoutMs);
      refusing = false;
      // A replay reaches its lane a moment after the API answers (the SQLite poll each
      // second on Node, the dead-letter store's alarm on Workers); the order asserted below
      // is the same either way, this only lets the replay join while w1 and w2 still wait.
      await new Promise((resolve) => setTimeout(resolve, 1_500));
      failing = false;
      await until(() => delivered(h.seen, conversationId).length === 4, timeoutMs, "four delivered replies");

      const replies = delivered(h.seen, conversationId);
      expect(replies.map((reply) => reply.text)).toEqual(["retry", "w1", "w2", "dead"]);
      const sequences = replies.map((reply) => reply.sequence);
      expect(sequences).toEqual([...sequences].sort((a, b) => a - b));
      expect(new Set(sequences).size).toBe(4);
      // The replay is the same reply (same webhook-id) with the conversation's next number.
      const refused = h.seen.find((reply) => reply.conversationId === conversationId && reply.text === "dead");
      expect(replies[3]?.id).toBe(refused?.id);
      expect(replies[3]?.sequence).toBeGreaterThan(refused?.sequence ?? Number.POSITIVE_INFINITY);
    },
    timeoutMs * 3,
  );
}
