/**
 * The shared delivery cases inside workerd: the Worker's fetch handler accepts each message,
 * its queue handler hands what the endpoint queued to the conversation's Durable Object (as
 * the platform would deliver it), and the object answers through the fetch of this isolate,
 * which a receiver here stands in for. A restart aborts every Durable Object instance: their
 * storage and alarms survive, as they survive a restart of the runtime.
 */
import { abortAllDurableObjects, createExecutionContext, createMessageBatch, getQueueResult } from "cloudflare:test";
import { afterAll, beforeAll, expect, vi } from "vitest";
import worker from "../../src/workers/index.js";
import {
  DELIVERY_CASES_ADMIN_ENV,
  DELIVERY_CASES_ADMIN_SECRET,
  DELIVERY_CASES_PATH,
  DELIVERY_CASES_SECRET,
  DELIVERY_CASES_SECRET_ENV,
  type DeliveryHarness,
  deliveryCasesConfig,
  recordPost,
} from "../shared/delivery-cases.js";
import { deliveryCases } from "../shared/delivery-cases-suite.js";
import { replaceObjectEnvironment } from "./support/object-environment.js";
import { delivered } from "./support/queue-messages.js";
import { type TestEnv, testEnv } from "./support/test-env.js";

const RECEIVER_URL = "https://receiver.example/cases";

let env: TestEnv;
let harness: DeliveryHarness;

beforeAll(() => {
  env = testEnv(deliveryCasesConfig(RECEIVER_URL), {
    [DELIVERY_CASES_SECRET_ENV]: DELIVERY_CASES_SECRET,
    [DELIVERY_CASES_ADMIN_ENV]: DELIVERY_CASES_ADMIN_SECRET,
  });
  replaceObjectEnvironment(env);
  // Log lines would only be noise here; the cases check what the receiver got.
  vi.spyOn(console, "log").mockImplementation(() => undefined);
  vi.spyOn(globalThis, "fetch").mockImplementation(async (input, init) => {
    const request = new Request(input, init);
    expect(request.url).toBe(RECEIVER_URL);
    const status = recordPost(harness, await request.json());
    if (status !== "hang") return new Response(null, { status });
    // A receiver that never answers: the POST ends when the poster gives up on it, as over a socket.
    return new Promise<Response>((_resolve, reject) => {
      const signal = init?.signal;
      signal?.addEventListener("abort", () => reject(signal.reason));
    });
  });
  harness = {
    seen: [],
    answer: () => 200,
    async send({ conversationId, text }) {
      const response = await worker.fetch(
        new Request(`https://channel.example${DELIVERY_CASES_PATH}`, {
          method: "POST",
          headers: { authorization: `Bearer ${DELIVERY_CASES_SECRET}`, "content-type": "application/json" },
          body: JSON.stringify({ sender_id: "u1", conversation_id: conversationId, text }),
        }),
        env,
      );
      expect(response.status).toBe(200);
      // The platform's part: the queued body goes to the queue handler.
      const batch = createMessageBatch("webhook-channel-inbound", [delivered(env.INBOUND.sent.shift())]);
      const ctx = createExecutionContext();
      await worker.queue(batch, env);
      expect((await getQueueResult(batch, ctx)).explicitAcks).toHaveLength(1);
      return ((await response.json()) as { message_id: string }).message_id;
    },
    async admin(path, init = {}) {
      // The platform's part: dead letters sent so far reach the dead-letter queue's consumer.
      const letters = env.DEAD_LETTERS.sent.splice(0);
      if (letters.length > 0) {
        const batch = createMessageBatch(
          "webhook-channel-dead-letters",
          letters.map((body) => delivered(body)),
        );
        const ctx = createExecutionContext();
        await worker.queue(batch, env);
        await getQueueResult(batch, ctx);
      }
      return worker.fetch(
        new Request(`https://channel.example${path}`, {
          ...init,
          headers: { authorization: `Bearer ${DELIVERY_CASES_ADMIN_SECRET}` },
        }),
        env,
      );
    },
    restart: () => abortAllDurableObjects(),
  };
});

afterAll(() => {
  replaceObjectEnvironment(undefined);
  vi.restoreAllMocks();
});

deliveryCases("the Worker inside workerd", () => harness, 15_000);
