import { createPrivateKey, createPublicKey, generateKeyPairSync, sign, verify } from "node:crypto";

/** An Ed25519 key pair made by node:crypto in Standard Webhooks form, to check our signer against. */
export interface NodeKeyPair {
  /** whsk_ with the 64-byte form (seed, then public key). */
  readonly secretKey: string;
  /** whsk_ with the 32-byte seed only. */
  readonly seedOnly: string;
  /** whpk_ with the 32-byte public key. */
  readonly publicKey: string;
}

// RFC 8410's DER headers of an Ed25519 private key (PKCS#8) and public key (SPKI).
const PKCS8_HEADER = Buffer.from("302e020100300506032b657004220420", "hex");
const SPKI_HEADER = Buffer.from("302a300506032b6570032100", "hex");

/** A new pair from node:crypto, not from the code under test. */
export function nodeKeyPair(): NodeKeyPair {
  const { privateKey } = generateKeyPairSync("ed25519");
  const jwk = privateKey.export({ format: "jwk" });
  const seed = Buffer.from(String(jwk.d), "base64url");
  const pub = Buffer.from(String(jwk.x), "base64url");
  return {
    secretKey: `whsk_${Buffer.concat([seed, pub]).toString("base64")}`,
    seedOnly: `whsk_${seed.toString("base64")}`,
    publicKey: `whpk_${pub.toString("base64")}`,
  };
}

/** The `whpk_` public key of a `whsk_` key, derived from its seed by node:crypto alone. */
export function publicKeyOfSecret(secretKey: string): string {
  const seed = Buffer.from(secretKey.slice("whsk_".length), "base64").subarray(0, 32);
  const privateKey = createPrivateKey({ key: Buffer.concat([PKCS8_HEADER, seed]), format: "der", type: "pkcs8" });
  const jwk = privateKey.export({ format: "jwk" });
  return `whpk_${Buffer.from(String(jwk.x), "base64url").toString("base64")}`;
}

/** The signature node:crypto makes with a `whsk_` key over `content` (Ed25519 is deterministic). */
export function nodeSignature(secretKey: string, content: string): string {
  const seed = Buffer.from(secretKey.slice("whsk_".length), "base64").subarray(0, 32);
  const privateKey = createPrivateKey({ key: Buffer.concat([PKCS8_HEADER, seed]), format: "der", type: "pkcs8" });
  return sign(null, Buffer.from(content), privateKey).toString("base64");
}

/** What one reply carried that a receiver verifies. */
export interface SignedAttempt {
  readonly id: string;
  readonly timestamp: string;
  readonly signature: string;
  readonly body: string;
}

/** What a received reply carried for its signature, as {@link verifiesV1a} takes it. */
export function signedAttemptOf(reply: {
  readonly headers: Readonly<Record<string, string | string[] | undefined>>;
  readonly raw: string;
}): SignedAttempt {
  const header = (name: string) => String(reply.headers[name] ?? "");
  return {
    id: header("webhook-id"),
    timestamp: header("webhook-timestamp"),
    signature: header("webhook-signature"),
    body: reply.raw,
  };
}

/**
 * Whether one of the `v1a` signatures of the attempt's `webhook-signature` header verifies
 * with `publicKey` under node:crypto, over the specification's signed content
 * `id.timestamp.body`: what a receiver holding only the public key does.
 */
export function verifiesV1a(attempt: SignedAttempt, publicKey: string): boolean {
  const raw = Buffer.from(publicKey.slice("whpk_".length), "base64");
  const key = createPublicKey({ key: Buffer.concat([SPKI_HEADER, raw]), format: "der", type: "spki" });
  const content = Buffer.from(`${attempt.id}.${attempt.timestamp}.${attempt.body}`);
  return attempt.signature
    .split(" ")
    .filter((part) => part.startsWith("v1a,"))
    .some((part) => verify(null, content, key, Buffer.from(part.slice("v1a,".length), "base64")));
}
