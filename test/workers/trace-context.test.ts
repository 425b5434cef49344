import { afterEach, describe, expect, it, vi } from "vitest";
import { parseTraceContext } from "../../src/core/http/trace-context.js";
import worker from "../../src/workers/index.js";
import { eventually, forgetConversations, handOver, objectsUse } from "./support/conversations.js";
import { captureLogs, fakeReceiver } from "./support/fake-receiver.js";
import { delivered } from "./support/queue-messages.js";
import { channelConfig, freshConversation, SECRET } from "./support/test-config.js";
import { testEnv } from "./support/test-env.js";

const TRACE_ID = "4bf92f3577b34da6a3ce929d0e0e4736";
const PARENT_ID = "00f067aa0ba902b7";

afterEach(async () => {
  await forgetConversations();
  vi.restoreAllMocks();
});

describe("W3C Trace Context inside workerd", () => {
  it("keeps an inbound traceparent through the queue and the conversation object to the reply POST", async () => {
    const { lines } = captureLogs();
    const { deliveries } = fakeReceiver((_delivery, index) => new Response(null, { status: index === 0 ? 500 : 200 }));
    const env = objectsUse(
      testEnv(channelConfig({ delivery: { initial_delay_ms: 20, max_delay_ms: 20 } }), { WEBHOOK_SECRET: SECRET }),
    );
    const response = await worker.fetch(
      new Request("https://channel.example/webhook", {
        method: "POST",
        headers: {
          authorization: `Bearer ${SECRET}`,
          "content-type": "application/json",
          traceparent: `00-${TRACE_ID}-${PARENT_ID}-01`,
          tracestate: "vendor=abc",
        },
        body: JSON.stringify({ sender_id: "u1", conversation_id: freshConversation(), text: "hi" }),
      }),
      env,
    );
    expect(response.status).toBe(200);
    await handOver(env, [delivered(env.INBOUND.sent.shift())]);

    // The first POST fails and is retried from the object's storage: both carry the trace.
    await eventually(() => expect(deliveries).toHaveLength(2));
    const spans = deliveries.map((delivery) => parseTraceContext(delivery.headers.traceparent ?? null, null));
    for (const span of spans) {
      expect(span?.traceId).toBe(TRACE_ID);
      expect(span?.parentId).not.toBe(PARENT_ID);
    }
    expect(spans[0]?.parentId).not.toBe(spans[1]?.parentId);
    expect(deliveries[1]?.headers.tracestate).toBe("vendor=abc");
    const retried = lines.find((line) => String(line.msg).startsWith("attempt failed"));
    expect(retried?.trace_id).toBe(TRACE_ID);
  });
});
