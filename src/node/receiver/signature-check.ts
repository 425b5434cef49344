import { createPublicKey, type KeyObject, verify } from "node:crypto";
import { errorMessage } from "../../core/channel-error.js";
import { createReplySigner } from "../../core/outbound/reply-signer.js";

/** Which scheme verified a reply, or why none did. */
export type SignatureVerdict = { readonly ok: true; readonly scheme: "v1" | "v1a" } | { readonly ok: false };

/** Checks one reply's `webhook-signature` against what the receiver was given. */
export type SignatureCheck = (raw: string, headers: Readonly<Record<string, string>>) => SignatureVerdict;

/** How far `webhook-timestamp` may be from now, as the standardwebhooks packages allow. */
const TOLERANCE_S = 5 * 60;

/**
 * The receiver's verification of either scheme: `v1` (HMAC) with the `whsec_` secret through
 * the `standardwebhooks` package, and `v1a` (Ed25519) with `whpk_` public keys (several
 * separated by spaces while the service rotates its key) through `node:crypto`, since that
 * package has no v1a. Undefined when it was given neither. Throws, saying which, when one is
 * unusable; never prints a secret.
 */
export async function createSignatureCheck(
  secret: string | undefined,
  publicKeys: string | undefined,
): Promise<SignatureCheck | undefined> {
  let hmac: ((raw: string, headers: Record<string, string>) => boolean) | undefined;
  if (secret !== undefined && secret !== "") {
    const { Webhook } = await import("standardwebhooks");
    let webhook: InstanceType<typeof Webhook>;
    try {
      // Read as the service reads it: the package would take bare base64 the service refuses.
      await createReplySigner({ secrets: { value: secret, variable: "WEBHOOK_SIGNING_SECRET" } });
      webhook = new Webhook(secret);
    } catch (error) {
      throw new Error(`WEBHOOK_SIGNING_SECRET is not a usable whsec_ secret: ${errorMessage(error)}`);
    }
    hmac = (raw, headers) => {
      try {
        webhook.verify(raw, headers);
        return true;
      } catch {
        return false;
      }
    };
  }
  const keys =
    publicKeys === undefined || publicKeys.trim() === "" ? [] : publicKeys.trim().split(/\s+/).map(importPublicKey);
  if (hmac === undefined && keys.length === 0) return undefined;
  return (raw, headers) => {
    if (hmac?.(raw, { ...headers }) ?? false) return { ok: true, scheme: "v1" };
    return keys.length > 0 && verifiesV1a(raw, headers, keys) ? { ok: true, scheme: "v1a" } : { ok: false };
  };
}

function importPublicKey(text: string): KeyObject {
  const bytes = text.startsWith("whpk_") ? Buffer.from(text.slice("whpk_".length), "base64") : undefined;
  if (bytes?.length !== 32) {
    throw new Error(
      "WEBHOOK_SIGNING_PUBLIC_KEY must hold whpk_<base64> Ed25519 public keys (npx webhook-channel public-key prints them)",
    );
  }
  return createPublicKey({ key: { kty: "OKP", crv: "Ed25519", x: bytes.toString("base64url") }, format: "jwk" });
}

/** A `v1a` signature of the header that one of `keys` verifies over `id.timestamp.body`, within the tolerance. */
function verifiesV1a(raw: string, headers: Readonly<Record<string, string>>, keys: readonly KeyObject[]): boolean {
  const id = headers["webhook-id"];
  const timestamp = headers["webhook-timestamp"];
  const header = headers["webhook-signature"];
  if (id === undefined || timestamp === undefined || header === undefined || !/^\d+$/.test(timestamp)) return false;
  if (Math.abs(Date.now() / 1000 - Number(timestamp)) > TOLERANCE_S) return false;
  const content = Buffer.from(`${id}.${timestamp}.${raw}`);
  const signatures = header
    .split(" ")
    .filter((part) => part.startsWith("v1a,"))
    .map((part) => Buffer.from(part.slice("v1a,".length), "base64"));
  return signatures.some((signature) => keys.some((key) => verify(null, content, key, signature)));
}
