import { describe, expect, it } from "vitest";
import { generateSigningKeyPair, importSigningKey } from "../../../src/core/outbound/signing-key.js";
import { nodeKeyPair, publicKeyOfSecret } from "../../support/ed25519-pair.js";

describe("Ed25519 signing keys", () => {
  it("makes a pair whose whsk_ holds the seed and then the public key that node:crypto derives, as the whpk_ says", async () => {
    const { secretKey, publicKey } = await generateSigningKeyPair();
    expect(secretKey).toMatch(/^whsk_[A-Za-z0-9+/]{86}==$/);
    expect(publicKey).toMatch(/^whpk_[A-Za-z0-9+/]{43}=$/);
    expect(publicKeyOfSecret(secretKey)).toBe(publicKey);
    const bytes = Buffer.from(secretKey.slice("whsk_".length), "base64");
    expect(`whpk_${bytes.subarray(32).toString("base64")}`).toBe(publicKey);
  });

  it("makes a new pair each time", async () => {
    const [a, b] = await Promise.all([generateSigningKeyPair(), generateSigningKeyPair()]);
    expect(a.secretKey).not.toBe(b.secretKey);
  });

  it("reads the public key of a key node:crypto made, in either form", async () => {
    const pair = nodeKeyPair();
    expect((await importSigningKey(pair.secretKey)).publicKey).toBe(pair.publicKey);
    expect((await importSigningKey(pair.seedOnly)).publicKey).toBe(pair.publicKey);
  });
});
