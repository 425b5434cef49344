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
 *
 * This module holds the harness, the configuration and the helpers the cases share; the cases
 * are in delivery-cases-order.ts, delivery-cases-dead-letters.ts and delivery-cases-outages.ts,
 * and delivery-cases-suite.ts defines them all for a runtime. It imports none of them on
 * purpose: the browser tests' project (test/browser/tsconfig.json) lists this file and
 * timeline-cases.ts, which imports it, one by one, and a composite project must list every
 * file it reaches.
 */

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

/** What a group of cases gets from the suite (delivery-cases-suite.ts) for one runtime. */
export interface DeliveryCaseContext {
  /** The runtime's name, as the suite's `describe` shows it. */
  readonly runtime: string;
  /** Called when a case starts: runners build the harness in `beforeAll`. */
  readonly harness: () => DeliveryHarness;
  /** Bounds each wait; each case gets a few times this. */
  readonly timeoutMs: number;
  /** Whether pending work survives {@link DeliveryHarness.restart} (not in the memory mode). */
  readonly restarts: boolean;
}

/** A conversation id of the case's own, so cases never see each other's replies. */
export const fresh = (name: string) => `${name}-${crypto.randomUUID()}`;

/** The texts `${prefix}1` to `${prefix}${count}`, in order. */
export const texts = (prefix: string, count: number) =>
  Array.from({ length: count }, (_, index) => `${prefix}${index + 1}`);

/** The numbers 1 to `count`: the sequence numbers of a conversation's first `count` replies. */
export const oneTo = (count: number) => Array.from({ length: count }, (_, index) => index + 1);
