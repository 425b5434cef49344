/**
 * `webhook.tls` inside workerd: a reply of a channel with `mtls_binding` leaves through that
 * binding's `fetch` (on Cloudflare, an `[[mtls_certificates]]` binding, which presents the
 * uploaded certificate), never the plain `fetch`. Miniflare has no local mTLS binding (only a
 * proxy to a remote one), so the binding here is a stand-in that records what it is asked to
 * send: this proves the Worker's wiring, not the platform's handshake (Node's tests do that).
 */
import { afterEach, describe, expect, it, vi } from "vitest";
import worker from "../../src/workers/index.js";
import { eventually, forgetConversations, handOver, objectsUse } from "./support/conversations.js";
import { captureLogs, fakeReceiver } from "./support/fake-receiver.js";
import { delivered } from "./support/queue-messages.js";
import { channelConfig, freshConversation, SECRET } from "./support/test-config.js";
import { testEnv } from "./support/test-env.js";

const HTTPS_URL = "https://receiver.example/replies";
const NODE_TLS = {
  client_cert_env: "RECEIVER_CLIENT_CERT",
  client_key_env: "RECEIVER_CLIENT_KEY",
  ca_env: "RECEIVER_CA",
};

afterEach(async () => {
  await forgetConversations();
  vi.restoreAllMocks();
});

const message = () =>
  new Request("https://channel.example/webhook", {
    method: "POST",
    headers: { authorization: `Bearer ${SECRET}`, "content-type": "application/json" },
    body: JSON.stringify({ sender_id: "u1", conversation_id: freshConversation(), text: "through the binding" }),
  });

describe("webhook.tls on Workers", () => {
  it("posts through the mTLS binding's fetch, and does not ask for the Node PEM variables", async () => {
    captureLogs();
    const plain = fakeReceiver();
    const sent: { url: string; body: unknown }[] = [];
    const binding = {
      fetch: async (input: RequestInfo | URL, init?: RequestInit) => {
        // Read here, in the conversation object's request: its body cannot leave that context.
        const request = new Request(input, init);
        sent.push({ url: request.url, body: await request.json() });
        return new Response(null, { status: 200 });
      },
    };
    const config = channelConfig({
      webhook: { outbound_url: HTTPS_URL, tls: { ...NODE_TLS, mtls_binding: "RECEIVER_MTLS" } },
    });
    const env = objectsUse(testEnv(config, { WEBHOOK_SECRET: SECRET, RECEIVER_MTLS: binding }));
    expect((await worker.fetch(message(), env)).status).toBe(200);
    await handOver(env, [delivered(env.INBOUND.sent.shift())]);
    await eventually(() => expect(sent).toHaveLength(1));
    expect(sent[0]?.url).toBe(HTTPS_URL);
    expect(sent[0]?.body).toMatchObject({ text: "through the binding" });
    expect(plain.deliveries).toHaveLength(0);
  });

  it("refuses a channel with tls but no mtls_binding, with the wrangler steps that make one", async () => {
    const { lines } = captureLogs();
    const env = testEnv(channelConfig({ webhook: { outbound_url: HTTPS_URL, tls: NODE_TLS } }), {
      WEBHOOK_SECRET: SECRET,
    });
    const response = await worker.fetch(message(), env);
    expect(response.status).toBe(500);
    expect(await response.json()).toMatchObject({ code: "config_invalid" });
    const logged = JSON.stringify(lines);
    expect(logged).toContain(
      "channels[0].webhook.tls: on Workers, fetch presents a client certificate only through an mTLS certificate binding",
    );
    expect(logged).toContain("wrangler mtls-certificate upload");
  });

  it("refuses an mtls_binding the Worker does not have", async () => {
    const { lines } = captureLogs();
    const config = channelConfig({ webhook: { outbound_url: HTTPS_URL, tls: { mtls_binding: "MISSING_MTLS" } } });
    const response = await worker.fetch(message(), testEnv(config, { WEBHOOK_SECRET: SECRET }));
    expect(response.status).toBe(500);
    expect(JSON.stringify(lines)).toContain(
      "channels[0].webhook.tls.mtls_binding: the Worker has no binding named MISSING_MTLS",
    );
  });
});
