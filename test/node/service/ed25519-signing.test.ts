/**
 * Ed25519 (`v1a`) signatures end to end on Node: the service signs each attempt with the
 * `whsk_` key of `signing_key_env`, and a receiver that holds only the `whpk_` public key
 * verifies it with node:crypto, over the specification's `id.timestamp.body`.
 */
import { Webhook } from "standardwebhooks";
import { afterEach, describe, expect, it } from "vitest";
import { nodeKeyPair, signedAttemptOf, verifiesV1a } from "../../support/ed25519-pair.js";
import { failure } from "../../support/failure.js";
import { type ServiceHarness, startHarness } from "../../support/node-service.js";
import { waitFor } from "../../support/wait-for.js";

const FAST = { initial_delay_ms: 20, max_delay_ms: 200 };
let harness: ServiceHarness | undefined;

afterEach(async () => {
  await harness?.close();
  harness = undefined;
});

describe("Ed25519 signatures on Node", () => {
  it("signs every attempt with v1a, which the public key verifies and a tampered body fails", async () => {
    const pair = nodeKeyPair();
    let answers = 0;
    harness = await startHarness(
      { delivery: FAST, signing_key_env: "SIGNING_KEY" },
      { status: () => (answers++ === 0 ? 500 : 200) },
      {},
      { SIGNING_KEY: pair.secretKey },
    );
    await harness.post({ sender_id: "a", text: "signed" });
    const replies = harness.replies;
    await waitFor(() => (replies.length >= 2 ? true : undefined), 5_000, "two attempts");
    for (const reply of replies) {
      const attempt = signedAttemptOf(reply);
      expect(attempt.signature).toMatch(/^v1a,[A-Za-z0-9+/]{86}==$/);
      expect(verifiesV1a(attempt, pair.publicKey)).toBe(true);
      expect(verifiesV1a({ ...attempt, body: attempt.body.replace("signed", "forged") }, pair.publicKey)).toBe(false);
    }
    expect(harness.logs.map((line) => JSON.stringify(line)).join("\n")).not.toContain(pair.secretKey.slice(5, 30));
  });

  it("signs with both schemes during a migration: standardwebhooks verifies v1, the public key v1a", async () => {
    const pair = nodeKeyPair();
    const secret = `whsec_${Buffer.from("m".repeat(32)).toString("base64")}`;
    harness = await startHarness(
      { signing_secret_env: "SIGNING_SECRET", signing_key_env: "SIGNING_KEY" },
      {},
      {},
      { SIGNING_SECRET: secret, SIGNING_KEY: pair.secretKey },
    );
    await harness.post({ sender_id: "a", text: "both" });
    const reply = await waitFor(() => harness?.replies[0], 5_000, "the reply");
    const attempt = signedAttemptOf(reply);
    expect(attempt.signature.split(" ").map((part) => part.split(",")[0])).toEqual(["v1", "v1a"]);
    expect(new Webhook(secret).verify(reply.raw, reply.headers as Record<string, string>)).toMatchObject({
      text: "both",
    });
    expect(verifiesV1a(attempt, pair.publicKey)).toBe(true);
  });

  it("signs with the new and the old key while rotating, so receivers holding either public key verify", async () => {
    const [next, previous] = [nodeKeyPair(), nodeKeyPair()];
    harness = await startHarness(
      { signing_key_env: "SIGNING_KEY" },
      {},
      {},
      { SIGNING_KEY: `${next.secretKey} ${previous.secretKey}` },
    );
    await harness.post({ sender_id: "a", text: "rotating" });
    const attempt = signedAttemptOf(await waitFor(() => harness?.replies[0], 5_000, "the reply"));
    expect(attempt.signature.split(" ")).toHaveLength(2);
    expect(verifiesV1a(attempt, next.publicKey)).toBe(true);
    expect(verifiesV1a(attempt, previous.publicKey)).toBe(true);
  });

  it("refuses to start with the public key in the signing key's variable, naming the variable only", async () => {
    const pair = nodeKeyPair();
    const error = await failure(
      startHarness({ signing_key_env: "SIGNING_KEY" }, {}, {}, { SIGNING_KEY: pair.publicKey }),
    );
    expect(error.code).toBe("config_invalid");
    expect(error.message).toMatch(/SIGNING_KEY is a whpk_ public key/);
    expect(error.message).not.toContain(pair.publicKey.slice(5));
  });
});
