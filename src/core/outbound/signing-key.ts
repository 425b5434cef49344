import { fromBase64, toBase64 } from "./base64.js";

/** Prefix of a Standard Webhooks Ed25519 secret key (the service's, for signing). */
export const SECRET_KEY_PREFIX = "whsk_";
/** Prefix of a Standard Webhooks Ed25519 public key (the receiver's, for verifying). */
export const PUBLIC_KEY_PREFIX = "whpk_";

/** An imported Ed25519 private key (spelled this way because Node's types lack a global CryptoKey). */
export type Ed25519Key = Awaited<ReturnType<typeof crypto.subtle.importKey>>;

/** A usable `whsk_` key: the key to sign with, and the `whpk_` public key receivers verify with. */
export interface SigningKey {
  readonly key: Ed25519Key;
  readonly publicKey: string;
}

const SEED_BYTES = 32;

// RFC 8410's PKCS#8 header for a 32-byte Ed25519 seed: WebCrypto imports a private Ed25519 key
// only as PKCS#8 or JWK, never as raw bytes, on Node and in workerd alike.
const PKCS8_HEADER = [0x30, 0x2e, 0x02, 0x01, 0x00, 0x30, 0x05, 0x06, 0x03, 0x2b, 0x65, 0x70, 0x04, 0x22, 0x04, 0x20];

/**
 * Why `text` is not a `whsk_` key, or undefined. Two forms are taken, as implementations of
 * the specification write them: the 32-byte seed (RFC 8032's private key), or 64 bytes, the
 * seed followed by its public key (libsodium's and Go's form, which `keypair` prints). Never
 * quotes the value.
 */
export function signingKeyFormatProblem(text: string): string | undefined {
  if (text.startsWith("whsec_"))
    return "is a whsec_ HMAC secret, not a whsk_ Ed25519 key (it belongs in signing_secret_env's variable)";
  if (text.startsWith(PUBLIC_KEY_PREFIX))
    return "is a whpk_ public key: the service signs with the whsk_ secret key printed with it, and the receiver holds the whpk_";
  if (!text.startsWith(SECRET_KEY_PREFIX)) return "does not start with whsk_";
  const bytes = fromBase64(text.slice(SECRET_KEY_PREFIX.length));
  if (bytes === undefined) return "is not whsk_ followed by standard base64";
  if (bytes.length !== SEED_BYTES && bytes.length !== 2 * SEED_BYTES) {
    return `holds ${bytes.length} bytes after whsk_, where an Ed25519 key has 32 (the seed) or 64 (the seed and its public key)`;
  }
  return undefined;
}

/**
 * Imports a `whsk_` key, or rejects with the reason (as {@link signingKeyFormatProblem} words
 * it, or that the public half of a 64-byte key is not the seed's own).
 */
export async function importSigningKey(text: string): Promise<SigningKey> {
  const problem = signingKeyFormatProblem(text);
  const bytes = problem === undefined ? fromBase64(text.slice(SECRET_KEY_PREFIX.length)) : undefined;
  if (problem !== undefined || bytes === undefined) throw new Error(problem ?? "is not a whsk_ key");
  const pkcs8 = new Uint8Array(PKCS8_HEADER.length + SEED_BYTES);
  pkcs8.set(PKCS8_HEADER);
  pkcs8.set(bytes.subarray(0, SEED_BYTES), PKCS8_HEADER.length);
  // Extractable only to read the public key once: JWK export gives it (`x`), raw export would not.
  const extractable = await crypto.subtle.importKey("pkcs8", pkcs8, { name: "Ed25519" }, true, ["sign"]);
  const jwk = await crypto.subtle.exportKey("jwk", extractable);
  const publicBytes = jwk.x === undefined ? undefined : fromBase64(fromBase64Url(jwk.x));
  if (publicBytes === undefined) throw new Error("cannot be read as an Ed25519 key");
  if (bytes.length === 2 * SEED_BYTES && toBase64(bytes.subarray(SEED_BYTES)) !== toBase64(publicBytes)) {
    throw new Error(
      "holds 64 bytes whose second half is not the public key of the first (a truncated or mixed-up key?)",
    );
  }
  const key = await crypto.subtle.importKey("pkcs8", pkcs8, { name: "Ed25519" }, false, ["sign"]);
  return { key, publicKey: `${PUBLIC_KEY_PREFIX}${toBase64(publicBytes)}` };
}

/** A new key pair: the `whsk_` secret key (64-byte form) and its `whpk_` public key. */
export async function generateSigningKeyPair(): Promise<{ secretKey: string; publicKey: string }> {
  const pair = await crypto.subtle.generateKey({ name: "Ed25519" }, true, ["sign", "verify"]);
  if (!("privateKey" in pair)) throw new Error("Ed25519 generateKey returned no key pair");
  const pkcs8 = new Uint8Array(await crypto.subtle.exportKey("pkcs8", pair.privateKey));
  const publicBytes = new Uint8Array(await crypto.subtle.exportKey("raw", pair.publicKey));
  const secret = new Uint8Array(2 * SEED_BYTES);
  secret.set(pkcs8.subarray(pkcs8.length - SEED_BYTES));
  secret.set(publicBytes, SEED_BYTES);
  return {
    secretKey: `${SECRET_KEY_PREFIX}${toBase64(secret)}`,
    publicKey: `${PUBLIC_KEY_PREFIX}${toBase64(publicBytes)}`,
  };
}

function fromBase64Url(text: string): string {
  const standard = text.replace(/-/g, "+").replace(/_/g, "/");
  return standard.padEnd(Math.ceil(standard.length / 4) * 4, "=");
}
