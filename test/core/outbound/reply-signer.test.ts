import { Webhook } from "standardwebhooks";
import { describe, expect, it } from "vitest";
import { createReplySigner } from "../../../src/core/outbound/reply-signer.js";
import { nodeKeyPair, nodeSignature, verifiesV1a } from "../../support/ed25519-pair.js";

const secret = `whsec_${Buffer.from("k".repeat(24)).toString("base64")}`;
const SECRET_VAR = "SIGNING_SECRET";
const KEY_VAR = "SIGNING_KEY";
const body = '{"text":"hi"}';

describe("createReplySigner with an HMAC secret (v1)", () => {
  it("produces a v1 signature that standardwebhooks accepts", async () => {
    const signer = await createReplySigner({ secrets: { value: secret, variable: SECRET_VAR } });
    const timestamp = Math.floor(Date.now() / 1000);
    const signature = await signer.sign("msg_1", timestamp, body);
    expect(signature).toMatch(/^v1,[A-Za-z0-9+/]+=*$/);
    const headers = { "webhook-id": "msg_1", "webhook-timestamp": String(timestamp), "webhook-signature": signature };
    expect(new Webhook(secret).verify(body, headers)).toEqual({ text: "hi" });
  });

  it.each(["plain", "whsec_", "whsec_***", `${secret} nope`])("rejects the secret %j", async (value) => {
    await expect(createReplySigner({ secrets: { value, variable: SECRET_VAR } })).rejects.toMatchObject({
      code: "config_invalid",
      message: expect.stringContaining(SECRET_VAR),
    });
  });
});

describe("createReplySigner with an Ed25519 key (v1a)", () => {
  it("signs id.timestamp.body exactly as node:crypto does, and node:crypto verifies it with the whpk_ alone", async () => {
    const pair = nodeKeyPair();
    const signer = await createReplySigner({ keys: { value: pair.secretKey, variable: KEY_VAR } });
    const signature = await signer.sign("msg_1", 1_700_000_000, body);
    expect(signature).toBe(`v1a,${nodeSignature(pair.secretKey, `msg_1.1700000000.${body}`)}`);
    const attempt = { id: "msg_1", timestamp: "1700000000", signature, body };
    expect(verifiesV1a(attempt, pair.publicKey)).toBe(true);
    expect(verifiesV1a({ ...attempt, body: body.replace("hi", "ho") }, pair.publicKey)).toBe(false);
    expect(verifiesV1a({ ...attempt, timestamp: "1700000001" }, pair.publicKey)).toBe(false);
    expect(verifiesV1a(attempt, nodeKeyPair().publicKey)).toBe(false);
  });

  it("takes the 32-byte seed form as well, with the same signatures", async () => {
    const pair = nodeKeyPair();
    const long = await createReplySigner({ keys: { value: pair.secretKey, variable: KEY_VAR } });
    const short = await createReplySigner({ keys: { value: pair.seedOnly, variable: KEY_VAR } });
    expect(await short.sign("m", 1, body)).toBe(await long.sign("m", 1, body));
  });

  it("signs with both keys during a rotation, new first, so receivers holding either public key verify", async () => {
    const next = nodeKeyPair();
    const previous = nodeKeyPair();
    const signer = await createReplySigner({
      keys: { value: `${next.secretKey} ${previous.secretKey}`, variable: KEY_VAR },
    });
    const signature = await signer.sign("msg_2", 1_700_000_000, body);
    const parts = signature.split(" ");
    expect(parts).toHaveLength(2);
    expect(parts[0]).toBe(`v1a,${nodeSignature(next.secretKey, `msg_2.1700000000.${body}`)}`);
    const attempt = { id: "msg_2", timestamp: "1700000000", signature, body };
    expect(verifiesV1a(attempt, next.publicKey)).toBe(true);
    expect(verifiesV1a(attempt, previous.publicKey)).toBe(true);
  });

  it.each([
    ["secrets", () => `${secret} ${secret} ${secret}`, SECRET_VAR],
    ["keys", () => [nodeKeyPair(), nodeKeyPair(), nodeKeyPair()].map((pair) => pair.secretKey).join(" "), KEY_VAR],
  ] as const)(
    "refuses three %s in one variable with config_invalid naming it, never a value",
    async (kind, value, variable) => {
      const values = value();
      const made = createReplySigner(
        kind === "secrets" ? { secrets: { value: values, variable } } : { keys: { value: values, variable } },
      );
      await expect(made).rejects.toMatchObject({ code: "config_invalid" });
      await expect(made).rejects.toThrow(`${variable} holds 3 values: it must hold one, or two`);
      await made.catch((error: unknown) => expect(String(error)).not.toContain(values.split(" ")[0]?.slice(6, 20)));
    },
  );

  it("signs with both schemes during a move from HMAC: v1 for standardwebhooks, v1a for the public key", async () => {
    const pair = nodeKeyPair();
    const signer = await createReplySigner({
      secrets: { value: secret, variable: SECRET_VAR },
      keys: { value: pair.secretKey, variable: KEY_VAR },
    });
    const timestamp = Math.floor(Date.now() / 1000);
    const signature = await signer.sign("msg_3", timestamp, body);
    expect(signature.split(" ").map((part) => part.split(",")[0])).toEqual(["v1", "v1a"]);
    const headers = { "webhook-id": "msg_3", "webhook-timestamp": String(timestamp), "webhook-signature": signature };
    expect(new Webhook(secret).verify(body, headers)).toEqual({ text: "hi" });
    expect(verifiesV1a({ id: "msg_3", timestamp: String(timestamp), signature, body }, pair.publicKey)).toBe(true);
  });

  it.each([
    ["a whsec_ secret", () => secret, /is a whsec_ HMAC secret/],
    ["the whpk_ public key", () => nodeKeyPair().publicKey, /is a whpk_ public key/],
    ["no prefix", () => "plain-0123456789abcdefghij", /does not start with whsk_/],
    ["bad base64", () => "whsk_not base64!", /standard base64/],
    ["the wrong length", () => `whsk_${Buffer.alloc(48).toString("base64")}`, /holds 48 bytes/],
    [
      "halves of two keys",
      () => {
        const [a, b] = [nodeKeyPair(), nodeKeyPair()];
        const seed = Buffer.from(a.secretKey.slice(5), "base64").subarray(0, 32);
        const other = Buffer.from(b.publicKey.slice(5), "base64");
        return `whsk_${Buffer.concat([seed, other]).toString("base64")}`;
      },
    ],
  ])("refuses %s, naming the variable and never the value", async (_name, value, reason = /second half/) => {
    const text = value();
    const error = await createReplySigner({ keys: { value: text, variable: KEY_VAR } }).catch(
      (caught: unknown) => caught,
    );
    expect(error).toMatchObject({ code: "config_invalid", variable: KEY_VAR, message: expect.stringMatching(reason) });
    expect((error as Error).message).toContain(KEY_VAR);
    expect((error as Error).message).not.toContain(text.slice(5, 20));
  });

  it("names which key of a rotation is unusable", async () => {
    const error = await createReplySigner({
      keys: { value: `${nodeKeyPair().secretKey} whsk_AAAA`, variable: KEY_VAR },
    }).catch((caught: unknown) => caught);
    expect((error as Error).message).toMatch(/^key 2 of 2 in SIGNING_KEY holds 3 bytes/);
  });
});
