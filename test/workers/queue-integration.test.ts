import { exports } from "cloudflare:workers";
import { afterEach, expect, it, vi } from "vitest";
import bundledConfig from "../../config.json";
import { captureLogs, fakeReceiver } from "./support/fake-receiver.js";

afterEach(() => {
  vi.restoreAllMocks();
});

it("answers through the real bindings: fetch → INBOUND queue → consumer → outbound_url", async () => {
  captureLogs();
  const { deliveries } = fakeReceiver();
  const conversationId = `c-${crypto.randomUUID()}`;
  // The pool's environment: wrangler.toml's bindings, the bundled config.json, and the
  // WEBHOOK_SECRET binding of vitest.config.ts.
  const response = await exports.default.fetch("https://channel.example/webhook", {
    method: "POST",
    headers: { authorization: "Bearer workers-test-secret", "content-type": "application/json" },
    body: JSON.stringify({ sender_id: "u1", text: "through the queue", conversation_id: conversationId }),
  });
  expect(response.status).toBe(200);
  const { message_id: messageId } = (await response.json()) as { message_id: string };

  await vi.waitFor(() => expect(deliveries).toHaveLength(1), { timeout: 5000, interval: 20 });
  expect(deliveries[0]?.url).toBe(bundledConfig.channels[0]?.webhook.outbound_url);
  expect(deliveries[0]?.body).toMatchObject({
    in_reply_to: messageId,
    conversation_id: conversationId,
    text: "through the queue",
    sequence: 1,
  });
});
