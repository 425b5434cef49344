/**
 * The timeline promises as cases shared by every runtime, over the same harness as the delivery
 * cases ({@link DeliveryHarness}): one message followed through a receiver that fails, a dead
 * letter, a replay and its delivery, read back from `GET /admin/messages/{id}` and the list of
 * its conversation. Runtime-neutral: no `node:` or `cloudflare:` imports.
 */
import { describe, expect, it } from "vitest";
import { type DeliveryHarness, delivered, replayDeadLetter, until } from "./delivery-cases.js";

/** An event as the API shows it: its type and whatever facts it carries. */
interface EventView {
  readonly type: string;
  readonly at: string;
  readonly [fact: string]: unknown;
}

/** A message's timeline as `GET /admin/messages/{id}` shows it. */
export interface TimelineView {
  readonly message_id: string;
  readonly conversation_id: string;
  readonly status: string;
  readonly waiting?: { readonly reason: string; readonly behind_message_id?: string };
  readonly events: readonly EventView[];
}

/** Reads a message's timeline through the admin API; undefined while the API does not know it. */
export async function readTimeline(
  h: Pick<DeliveryHarness, "admin">,
  messageId: string,
): Promise<TimelineView | undefined> {
  const response = await h.admin(`/admin/messages/${encodeURIComponent(messageId)}`);
  if (response.status === 404) {
    await response.body?.cancel();
    return undefined;
  }
  if (response.status !== 200) throw new Error(`the timeline answered ${response.status}: ${await response.text()}`);
  return (await response.json()) as TimelineView;
}

/** Polls the timeline until `check` holds, and returns it. */
export async function timelineWhen(
  h: Pick<DeliveryHarness, "admin">,
  messageId: string,
  check: (view: TimelineView) => boolean,
  timeoutMs: number,
  what: string,
): Promise<TimelineView> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const view = await readTimeline(h, messageId);
    if (view !== undefined && check(view)) return view;
    if (Date.now() > deadline) {
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}; last: ${JSON.stringify(view)}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** Defines the cases for one runtime, as {@link deliveryCases} does. */
export function timelineCases(runtime: string, harness: () => DeliveryHarness, timeoutMs = 30_000): void {
  describe(`the shared timeline cases: ${runtime}`, () => {
    it(
      "follows one message through a failing receiver, a dead letter and a replay, in order, from any replica",
      async () => {
        const h = harness();
        const conversationId = `timeline-${crypto.randomUUID()}`;
        let refusing = true;
        // Two 503s (retried), then a 400 (a dead letter), then, after the replay, a 200.
        h.answer = (reply, attempt) => {
          if (reply.conversationId !== conversationId) return 200;
          if (!refusing) return 200;
          return attempt <= 2 ? 503 : 400;
        };
        const messageId = await h.send({ conversationId, text: "where am I" });
        const dead = await timelineWhen(
          h,
          messageId,
          (view) => view.status === "dead_letter",
          timeoutMs,
          "a dead letter",
        );
        expect(dead.conversation_id).toBe(conversationId);
        expect(dead.events.map((event) => event.type)).toEqual([
          "accepted",
          "brain_call",
          "reply",
          "attempt",
          "retry",
          "attempt",
          "retry",
          "attempt",
          "dead_letter",
        ]);
        const attempts = dead.events.filter((event) => event.type === "attempt");
        expect(attempts.map((event) => [event.ok, event.status])).toEqual([
          [false, 503],
          [false, 503],
          [false, 400],
        ]);
        expect(dead.events.find((event) => event.type === "brain_call")).toMatchObject({ brain: "echo", ok: true });
        // Message text is not kept unless the operator asks for it.
        expect(JSON.stringify(dead)).not.toContain("where am I");

        refusing = false;
        await replayDeadLetter(h, messageId, timeoutMs);
        await until(() => delivered(h.seen, conversationId).length === 1, timeoutMs, "the replayed reply delivered");
        const done = await timelineWhen(h, messageId, (view) => view.status === "delivered", timeoutMs, "delivered");
        // The replay numbers the reply anew in its lane: the timeline says which number it took.
        expect(done.events.map((event) => event.type).slice(-5)).toEqual([
          "dead_letter",
          "replayed",
          "reply",
          "attempt",
          "delivered",
        ]);
        const renumbered = done.events.at(-3);
        expect(renumbered?.sequence).toBe(done.events.at(-2)?.sequence);
        expect(renumbered?.reply_id).toBe(done.events.find((event) => event.type === "reply")?.reply_id);
        expect(done.waiting).toBeUndefined();
        expect(done.events.at(-2)).toMatchObject({ type: "attempt", ok: true, status: 200 });
        const times = done.events.map((event) => Date.parse(event.at));
        expect(times).toEqual([...times].sort((a, b) => a - b));

        const list = await h.admin(`/admin/messages?conversation_id=${encodeURIComponent(conversationId)}`);
        expect(list.status).toBe(200);
        const page = (await list.json()) as { items: { message_id: string; status: string }[]; next_cursor: unknown };
        expect(page.items.map((item) => [item.message_id, item.status])).toEqual([[messageId, "delivered"]]);
        expect(page.next_cursor).toBeNull();
      },
      timeoutMs * 3,
    );

    it(
      "says what a message waits behind while its conversation's earlier message retries",
      async () => {
        const h = harness();
        const conversationId = `behind-${crypto.randomUUID()}`;
        let open = false;
        h.answer = (reply) => (reply.conversationId !== conversationId || open ? 200 : 503);
        const first = await h.send({ conversationId, text: "first" });
        const second = await h.send({ conversationId, text: "second" });
        const waiting = await timelineWhen(
          h,
          second,
          (view) => view.waiting?.reason === "behind_message",
          timeoutMs,
          "the second message waiting behind the first",
        );
        expect(waiting.waiting?.behind_message_id).toBe(first);
        // Between its attempts it waits for the retry; during one, a runtime that sees it run says so.
        const retrying = await timelineWhen(
          h,
          first,
          (view) => view.status === "retrying" && view.waiting?.reason !== "in_progress",
          timeoutMs,
          "a retry",
        );
        expect(retrying.waiting?.reason).toBe("retry");
        open = true;
        await until(() => delivered(h.seen, conversationId).length === 2, timeoutMs, "both replies delivered");
        await timelineWhen(h, second, (view) => view.status === "delivered", timeoutMs, "the second delivered");
      },
      timeoutMs * 2,
    );

    it("answers 404 for a message it never accepted", async () => {
      const response = await harness().admin("/admin/messages/never-accepted");
      expect(response.status).toBe(404);
      expect(response.headers.get("content-type")).toContain("application/problem+json");
      expect(((await response.json()) as { code: string }).code).toBe("not_found");
    });
  });
}
