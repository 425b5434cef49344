/**
 * Ed25519 (`v1a`) signatures inside workerd: the same core signer as on Node, on the
 * platform's WebCrypto. The key pair below was made by node:crypto (workerd has no node:crypto
 * here), and the receiver verifies with the `whpk_` public key alone, as a receiver would.
 */
import { afterEach, describe, expect, it, vi } from "vitest";
import worker from "../../src/workers/index.js";
import { eventually, forgetConversations, handOver, objectsUse } from "./support/conversations.js";
import { captureLogs, type Delivery, fakeReceiver } from "./support/fake-receiver.js";
import { delivered } from "./support/queue-messages.js";
import { channelConfig, freshConversation, SECRET } from "./support/test-config.js";
import { testEnv } from "./support/test-env.js";

const SECRET_KEY = "whsk_XWFSkXbiw3fcFkgr4UzXSfWdq0KMew2PL5mRRIBNIc1YTjXee/KQP16nazCuQwDwlno2abXE6E8lSK2EVlyBOw==";
const PUBLIC_KEY = "whpk_WE413nvykD9ep2swrkMA8JZ6Nmm1xOhPJUithFZcgTs=";
const HMAC_SECRET = `whsec_${btoa("w".repeat(32))}`;

afterEach(async () => {
  await forgetConversations();
  vi.restoreAllMocks();
});

const bytesOf = (base64: string) => Uint8Array.from(atob(base64), (character) => character.charCodeAt(0));

/** Whether a v1a signature of the delivery verifies with the whpk_ key over id.timestamp.body. */
async function verifiesV1a(delivery: Delivery, publicKey: string): Promise<boolean> {
  const key = await crypto.subtle.importKey("raw", bytesOf(publicKey.slice(5)), { name: "Ed25519" }, false, ["verify"]);
  const content = new TextEncoder().encode(
    `${delivery.headers["webhook-id"]}.${delivery.headers["webhook-timestamp"]}.${JSON.stringify(delivery.body)}`,
  );
  const signatures = (delivery.headers["webhook-signature"] ?? "").split(" ").filter((part) => part.startsWith("v1a,"));
  for (const signature of signatures) {
    if (await crypto.subtle.verify({ name: "Ed25519" }, key, bytesOf(signature.slice(4)), content)) return true;
  }
  return false;
}

async function sendOne(variables: Record<string, string>, webhook: Record<string, unknown>): Promise<Delivery> {
  captureLogs();
  const { deliveries } = fakeReceiver();
  const env = objectsUse(testEnv(channelConfig({ webhook }), { WEBHOOK_SECRET: SECRET, ...variables }));
  const response = await worker.fetch(
    new Request("https://channel.example/webhook", {
      method: "POST",
      headers: { authorization: `Bearer ${SECRET}`, "content-type": "application/json" },
      body: JSON.stringify({ sender_id: "u1", conversation_id: freshConversation(), text: "signed" }),
    }),
    env,
  );
  expect(response.status).toBe(200);
  await handOver(env, [delivered(env.INBOUND.sent.shift())]);
  await eventually(() => expect(deliveries).toHaveLength(1));
  const [delivery] = deliveries;
  if (delivery === undefined) throw new Error("no delivery");
  return delivery;
}

describe("Ed25519 signatures inside workerd", () => {
  it("signs the reply with v1a, which the public key verifies", async () => {
    const delivery = await sendOne({ SIGNING_KEY: SECRET_KEY }, { signing_key_env: "SIGNING_KEY" });
    expect(delivery.headers["webhook-signature"]).toMatch(/^v1a,[A-Za-z0-9+/]{86}==$/);
    expect(await verifiesV1a(delivery, PUBLIC_KEY)).toBe(true);
    expect(await verifiesV1a({ ...delivery, body: { ...delivery.body, text: "forged" } }, PUBLIC_KEY)).toBe(false);
  });

  it("signs with v1 and v1a while moving from an HMAC secret", async () => {
    const delivery = await sendOne(
      { SIGNING_KEY: SECRET_KEY, SIGNING_SECRET: HMAC_SECRET },
      { signing_key_env: "SIGNING_KEY", signing_secret_env: "SIGNING_SECRET" },
    );
    const schemes = (delivery.headers["webhook-signature"] ?? "").split(" ").map((part) => part.split(",")[0]);
    expect(schemes).toEqual(["v1", "v1a"]);
    expect(await verifiesV1a(delivery, PUBLIC_KEY)).toBe(true);
  });

  it("answers 500 config_invalid for a key that is not whsk_, logging the variable and never the value", async () => {
    const { lines } = captureLogs();
    const env = testEnv(channelConfig({ webhook: { signing_key_env: "SIGNING_KEY" } }), {
      WEBHOOK_SECRET: SECRET,
      SIGNING_KEY: PUBLIC_KEY,
    });
    const response = await worker.fetch(
      new Request("https://channel.example/webhook", {
        method: "POST",
        headers: { authorization: `Bearer ${SECRET}`, "content-type": "application/json" },
        body: JSON.stringify({ sender_id: "u1", text: "x" }),
      }),
      env,
    );
    expect(response.status).toBe(500);
    const logged = JSON.stringify(lines);
    expect(logged).toContain("SIGNING_KEY is a whpk_ public key");
    expect(logged).not.toContain(PUBLIC_KEY.slice(5));
  });
});
