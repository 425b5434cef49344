import { Webhook } from "standardwebhooks";
import { describe, expect, it } from "vitest";
import { createReplySigner } from "../../../src/core/outbound/reply-signer.js";
import { createSignatureCheck } from "../../../src/node/receiver/signature-check.js";
import { nodeKeyPair } from "../../support/ed25519-pair.js";

const body = '{"text":"hello"}';
const secret = `whsec_${Buffer.from("r".repeat(32)).toString("base64")}`;

function headersFor(signature: string, timestamp: number, id = "msg_r") {
  return { "webhook-id": id, "webhook-timestamp": String(timestamp), "webhook-signature": signature };
}

describe("the sample receiver's signature check", () => {
  it("verifies v1 with the whsec_ secret and v1a with the whpk_ public key, and says which", async () => {
    const pair = nodeKeyPair();
    const now = Math.floor(Date.now() / 1000);
    const check = await createSignatureCheck(secret, pair.publicKey);
    const v1 = new Webhook(secret).sign("msg_r", new Date(now * 1000), body);
    const v1a = await (await createReplySigner({ keys: { value: pair.secretKey, variable: "K" } })).sign(
      "msg_r",
      now,
      body,
    );
    expect(check?.(body, headersFor(v1, now))).toEqual({ ok: true, scheme: "v1" });
    expect(check?.(body, headersFor(v1a, now))).toEqual({ ok: true, scheme: "v1a" });
    expect(check?.(body.replace("hello", "forged"), headersFor(v1a, now))).toEqual({ ok: false });
    expect(check?.(body, headersFor(v1a, now, "msg_other"))).toEqual({ ok: false });
  });

  it("refuses a v1a signature whose timestamp is over five minutes away, as standardwebhooks does for v1", async () => {
    const pair = nodeKeyPair();
    const old = Math.floor(Date.now() / 1000) - 6 * 60;
    const check = await createSignatureCheck(undefined, pair.publicKey);
    const v1a = await (await createReplySigner({ keys: { value: pair.secretKey, variable: "K" } })).sign(
      "m",
      old,
      body,
    );
    expect(check?.(body, headersFor(v1a, old, "m"))).toEqual({ ok: false });
  });

  it("takes several public keys, for a service that rotates its key", async () => {
    const [next, previous] = [nodeKeyPair(), nodeKeyPair()];
    const now = Math.floor(Date.now() / 1000);
    const check = await createSignatureCheck("", `${next.publicKey} ${previous.publicKey}`);
    const signer = await createReplySigner({ keys: { value: previous.secretKey, variable: "K" } });
    expect(check?.(body, headersFor(await signer.sign("m", now, body), now, "m"))).toEqual({ ok: true, scheme: "v1a" });
  });

  it("checks nothing when given nothing, and refuses a public key that is not whpk_", async () => {
    expect(await createSignatureCheck(undefined, undefined)).toBeUndefined();
    await expect(createSignatureCheck(undefined, nodeKeyPair().secretKey)).rejects.toThrow(/whpk_<base64>/);
    // A secret the service would refuse (no whsec_ prefix) is refused here too, not verified against.
    await expect(createSignatureCheck("bm9wZQ==", undefined)).rejects.toThrow(
      /^WEBHOOK_SIGNING_SECRET is not a usable whsec_ secret: WEBHOOK_SIGNING_SECRET must hold "whsec_<base64>"/,
    );
  });
});
