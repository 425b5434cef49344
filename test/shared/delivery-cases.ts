/**
 * The delivery promises as one suite of cases, shared by every runtime: the Node service
 * (test/node/service/delivery-cases.test.ts), the Worker inside workerd
 * (test/workers/delivery-cases.test.ts) and the Worker under `wrangler dev`
 * (test/workers/node/wrangler-dev.test.ts). Runtime-neutral on purpose: no `node:` or
 * `cloudflare:` imports; each runner brings a {@link DeliveryHarness} over its real parts.
 *
 * Every case assumes {@link deliveryCasesConfig} with {@link DELIVERY_CASES_SECRET_ENV} set
 * to {@link DELIVERY_CASES_SECRET}, uses conversation ids of its own, and waits on
 * conditions, never on fixed sleeps, so a slow machine only makes it slower.
 */
import { describe, expect, it } from "vitest";

/** The inbound secret the cases authenticate with. */
export const DELIVERY_CASES_SECRET = "delivery-cases-secret-0123456789abcdefghijklmnop";

/** The variable that holds {@link DELIVERY_CASES_SECRET}. */
export const DELIVERY_CASES_SECRET_ENV = "DELIVERY_CASES_SECRET";

/** The admin API's secret in the cases' configuration, and the variable that holds it. */
export const DELIVERY_CASES_ADMIN_SECRET = "delivery-cases-admin-secret-0123456789abcdefghijkl";
export const DELIVERY_CASES_ADMIN_ENV = "DELIVERY_CASES_ADMIN_SECRET";

/** Unanswered POSTs in a row that take the cases' receiver down. */
export const CASES_CIRCUIT_FAILURES = 20;

/** Where the cases' channel listens. */
export const DELIVERY_CASES_PATH = "/cases";

/**
 * The configuration the cases assume, with the runner's receiver as `outbound_url`: one
 * channel, the echo brain, quick retries (50 ms doubling to 400 ms) and attempts enough to
 * outlast any case, so that only a receiver that refuses (4xx) makes a dead letter. The
 * receiver goes down after {@link CASES_CIRCUIT_FAILURES} unanswered POSTs in a row: more
 * than one conversation's retries make in the other cases. The admin
 * API is on ({@link DELIVERY_CASES_ADMIN_ENV}), for the replay case.
 */
export function deliveryCasesConfig(outboundUrl: string, extra: Readonly<Record<string, unknown>> = {}) {
  return {
    channels: [
      {
        type: "webhook",
        name: "cases",
        token_env: DELIVERY_CASES_SECRET_ENV,
        webhook: {
          bind: "127.0.0.1:0",
          path: DELIVERY_CASES_PATH,
          outbound_url: outboundUrl,
          delivery: {
            initial_delay_ms: 50,
            max_delay_ms: 400,
            max_attempts: 1000,
            max_age_ms: 600_000,
            circuit_failures: CASES_CIRCUIT_FAILURES,
          },
        },
      },
    ],
    routes: [{ channel: "cases", brain: "echo" }],
    admin: { token_env: DELIVERY_CASES_ADMIN_ENV },
    ...extra,
  };
}

/** One POST of a reply as the receiver got it, and what the receiver answered. */
export interface SeenReply {
  /** The reply's `message_id` (its `webhook-id`). */
  readonly id: string;
  readonly inReplyTo: string;
  readonly conversationId: string;
  readonly text: string;
  readonly sequence: number;
  /** The status answered, or {@link UNANSWERED} for a POST the receiver left hanging. */
  readonly status: number;
}

/** The status of a POST the receiver never answered (see {@link ReceiverAnswer}). */
export const UNANSWERED = 0;

/**
 * What the receiver answers to a POST: `attempt` counts this reply's POSTs, from 1. `"hang"`
 * answers nothing: the runner's receiver keeps the request open, as a stuck receiver does, until
 * the runtime gives up on it (the POST's `timeout_ms`).
 */
export type ReceiverAnswer = (reply: Omit<SeenReply, "status">, attempt: number) => number | "hang";

/** What a runtime brings to run the cases. */
export interface DeliveryHarness {
  /** POSTs a message to the cases' channel as a client does; resolves with its `message_id`. */
  send(message: { readonly conversationId: string; readonly text: string }): Promise<string>;
  /** Every POST the receiver got, in arrival order. Runners fill it with {@link recordPost}. */
  readonly seen: SeenReply[];
  /** How the receiver answers from now on; each case sets its own. */
  answer: ReceiverAnswer;
  /** Stops the runtime and starts it again over the same durable state; absent where it cannot. */
  readonly restart?: () => Promise<void>;
  /** Sends a request to the runtime's admin API with the admin secret (see {@link replayDeadLetter}). */
  readonly admin: (path: string, init?: RequestInit) => Promise<Response>;
}

/**
 * Replays the dead letter of `messageId` through the admin API, once it is listed there (on
 * Workers a letter reaches the dead-letter store through the dead-letter queue, a moment later).
 */
export async function replayDeadLetter(
  h: Pick<DeliveryHarness, "admin">,
  messageId: string,
  timeoutMs: number,
): Promise<void> {
  const path = `/admin/dead-letters/${encodeURIComponent(messageId)}`;
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const response = await h.admin(path);
    await response.body?.cancel();
    if (response.status === 200) break;
    if (response.status !== 404 || Date.now() > deadline) {
      throw new Error(`the admin API answered ${response.status} for the dead letter ${messageId}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  const replay = await h.admin(`${path}/replay`, { method: "POST" });
  if (replay.status >= 300) throw new Error(`the replay answered ${replay.status}: ${await replay.text()}`);
  await replay.body?.cancel();
}

/**
 * What a runner's receiver does with one POST: records it in `harness.seen` and returns the
 * status to answer with, or `"hang"` to leave it unanswered. `body` is the parsed JSON body.
 */
export function recordPost(harness: DeliveryHarness, body: unknown): number | "hang" {
  const fields = (typeof body === "object" && body !== null ? body : {}) as Record<string, unknown>;
  const reply = {
    id: String(fields.message_id),
    inReplyTo: String(fields.in_reply_to),
    conversationId: String(fields.conversation_id),
    text: String(fields.text),
    sequence: Number(fields.sequence),
  };
  const attempt = harness.seen.filter((seen) => seen.id === reply.id).length + 1;
  const status = harness.answer(reply, attempt);
  harness.seen.push({ ...reply, status: status === "hang" ? UNANSWERED : status });
  return status;
}

/** The replies of a conversation that were delivered (2xx), each once, in the order they first were. */
export function delivered(seen: readonly SeenReply[], conversationId: string): SeenReply[] {
  const ids = new Set<string>();
  const first: SeenReply[] = [];
  for (const reply of seen) {
    if (reply.conversationId !== conversationId || reply.status < 200 || reply.status >= 300 || ids.has(reply.id)) {
      continue;
    }
    ids.add(reply.id);
    first.push(reply);
  }
  return first;
}

/** Polls until `check` is true, or fails naming `what` after `timeoutMs`. */
export async function until(check: () => boolean, timeoutMs: number, what: string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

const texts = (prefix: string, count: number) => Array.from({ length: count }, (_, index) => `${prefix}${index + 1}`);
const oneTo = (count: number) => Array.from({ length: count }, (_, index) => index + 1);

/**
 * Defines the cases for one runtime. `harness` is called when a case starts (runners build
 * it in `beforeAll`); `timeoutMs` bounds each wait and each case.
 */
export function deliveryCases(
  runtime: string,
  harness: () => DeliveryHarness,
  timeoutMs = 30_000,
  options: { readonly restarts: boolean } = { restarts: true },
): void {
  const fresh = (name: string) => `${name}-${crypto.randomUUID()}`;

  describe(`the shared delivery cases: ${runtime}`, () => {
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

    it(
      "holds every conversation's replies while the receiver is down, probing one POST at a time, and resumes them in order when it is back",
      async () => {
        const h = harness();
        const conversations = Array.from({ length: 10 }, (_, index) => fresh(`outage${index}`));
        const mine = new Set(conversations);
        let outage = true;
        let wentDown = false;
        h.answer = (reply) => {
          if (!mine.has(reply.conversationId) || !outage) return 200;
          const failed = h.seen.filter((seen) => mine.has(seen.conversationId)).length + 1;
          if (failed === CASES_CIRCUIT_FAILURES) wentDown = true;
          return 503;
        };
        for (const conversationId of conversations) await h.send({ conversationId, text: "o1" });
        for (const conversationId of conversations) await h.send({ conversationId, text: "o2" });
        await until(() => wentDown, timeoutMs, "the receiver to go down");
        // Down: ten conversations would retry every 400 ms at most, 30 POSTs in 1.2 s; the probe
        // alone posts, on the schedule (50 ms doubling to 400 ms), one at a time. The POSTs under
        // way when it went down (on Workers, one per conversation that had not heard yet) settle first.
        await new Promise((resolve) => setTimeout(resolve, 600));
        const settled = h.seen.length;
        await new Promise((resolve) => setTimeout(resolve, 1_200));
        const whileDown = h.seen.slice(settled).filter((seen) => mine.has(seen.conversationId));
        expect(whileDown.length).toBeLessThanOrEqual(6);
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
    if (options.restarts)
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
          const ids = new Set(
            h.seen.filter((reply) => reply.conversationId === conversationId).map((reply) => reply.id),
          );
          expect(ids.size).toBe(5);
        },
        timeoutMs * 4,
      );
  });
}
