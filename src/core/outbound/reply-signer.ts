import { ChannelError } from "../channel-error.js";

/** Signs reply attempts as the Standard Webhooks specification describes. */
export interface ReplySigner {
  /** The `webhook-signature` value for one attempt: `v1,<base64>` per secret, space-separated. */
  sign(id: string, timestamp: number, body: string): Promise<string>;
}

const encoder = new TextEncoder();

/** An imported HMAC key (spelled this way because Node's types lack a global CryptoKey). */
type HmacKey = Awaited<ReturnType<typeof crypto.subtle.importKey>>;

/**
 * Builds a signer from the value of `signing_secret_env`: one `whsec_<base64>` secret, or two
 * separated by a space during a rotation (both sign, so receivers holding either verify).
 * The HMAC keys are imported once here, not per attempt.
 */
export async function createReplySigner(value: string, variable: string): Promise<ReplySigner> {
  const secrets = value.trim().split(/\s+/);
  const keys = await Promise.all(secrets.map((secret) => importSecret(secret, variable)));
  return {
    async sign(id, timestamp, body) {
      const content = encoder.encode(`${id}.${timestamp}.${body}`);
      const signatures = await Promise.all(keys.map((key) => crypto.subtle.sign("HMAC", key, content)));
      return signatures.map((signature) => `v1,${toBase64(new Uint8Array(signature))}`).join(" ");
    },
  };
}

function importSecret(secret: string, variable: string): Promise<HmacKey> {
  const raw = secret.startsWith("whsec_") ? secret.slice("whsec_".length) : undefined;
  let bytes: Uint8Array<ArrayBuffer> | undefined;
  try {
    bytes = raw === undefined || raw === "" ? undefined : fromBase64(raw);
  } catch {
    bytes = undefined;
  }
  if (bytes === undefined) {
    throw new ChannelError(
      "config_invalid",
      `${variable} must hold "whsec_<base64>" signing secrets (two separated by a space while rotating)`,
    );
  }
  return crypto.subtle.importKey("raw", bytes, { name: "HMAC", hash: "SHA-256" }, false, ["sign"]);
}

function toBase64(bytes: Uint8Array): string {
  let binary = "";
  for (const byte of bytes) binary += String.fromCharCode(byte);
  return btoa(binary);
}

function fromBase64(text: string): Uint8Array<ArrayBuffer> {
  const binary = atob(text);
  const bytes = new Uint8Array(binary.length);
  for (let index = 0; index < binary.length; index += 1) bytes[index] = binary.charCodeAt(index);
  return bytes;
}
