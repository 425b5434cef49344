import { ChannelError } from "../channel-error.js";
import { fromBase64, toBase64 } from "./base64.js";
import { importSigningKey } from "./signing-key.js";

/** Signs reply attempts as the Standard Webhooks specification describes. */
export interface ReplySigner {
  /**
   * The `webhook-signature` value for one attempt: `v1,<base64>` per HMAC secret, then
   * `v1a,<base64>` per Ed25519 key, space-separated.
   */
  sign(id: string, timestamp: number, body: string): Promise<string>;
}

/** The value of a signing variable, and the variable's name for messages. */
export interface SigningValue {
  readonly value: string;
  readonly variable: string;
}

/** What a channel signs with: HMAC secrets (`signing_secret_env`), Ed25519 keys (`signing_key_env`), or both. */
export interface SigningValues {
  readonly secrets?: SigningValue | undefined;
  readonly keys?: SigningValue | undefined;
}

const encoder = new TextEncoder();

/** An imported key (spelled this way because Node's types lack a global CryptoKey). */
type ImportedKey = Awaited<ReturnType<typeof crypto.subtle.importKey>>;

/** One signature of the header: its scheme identifier and how to compute it. */
interface Scheme {
  readonly prefix: "v1" | "v1a";
  readonly key: ImportedKey;
  readonly algorithm: "HMAC" | "Ed25519";
}

/**
 * Builds a signer from the channel's signing variables. Each holds one value, or two separated
 * by a space during a rotation (both sign, so receivers holding either verify). With both
 * variables set, during a move from HMAC to Ed25519, every scheme signs. Keys are imported
 * once here, not per attempt. Rejects with `config_invalid` naming the variable, never a value.
 */
export async function createReplySigner(values: SigningValues): Promise<ReplySigner> {
  const schemes: Scheme[] = [];
  if (values.secrets !== undefined) {
    const { value, variable } = values.secrets;
    for (const secret of signingValues(value, variable)) {
      schemes.push({ prefix: "v1", key: await importSecret(secret, variable), algorithm: "HMAC" });
    }
  }
  if (values.keys !== undefined) {
    const { value, variable } = values.keys;
    const parts = signingValues(value, variable);
    for (const [index, part] of parts.entries()) {
      try {
        schemes.push({ prefix: "v1a", key: (await importSigningKey(part)).key, algorithm: "Ed25519" });
      } catch (error) {
        throw keyError(variable, parts.length, index, error);
      }
    }
  }
  return {
    async sign(id, timestamp, body) {
      const content = encoder.encode(`${id}.${timestamp}.${body}`);
      const signatures = await Promise.all(
        schemes.map(async ({ prefix, key, algorithm }) => {
          const signature = await crypto.subtle.sign(algorithm, key, content);
          return `${prefix},${toBase64(new Uint8Array(signature))}`;
        }),
      );
      return signatures.join(" ");
    },
  };
}

/** The most values a signing variable holds: the new and the old while rotating. */
export const MAX_SIGNING_VALUES = 2;

/**
 * The secrets or keys of a signing variable, split at whitespace: one, or two while rotating.
 * Refused with `config_invalid` naming `variable` (never a value) when it holds more than two: a third is a mistake (a key left from the rotation before, a paste twice),
 * and every one of them would sign every reply.
 */
export function signingValues(value: string, variable: string): string[] {
  const parts = value.trim().split(/\s+/);
  if (parts.length > MAX_SIGNING_VALUES) {
    throw new ChannelError(
      "config_invalid",
      `${variable} holds ${parts.length} values: it must hold one, or two (the new and the old) separated by a space while rotating`,
      { variable },
    );
  }
  return parts;
}

function importSecret(secret: string, variable: string): Promise<ImportedKey> {
  const raw = secret.startsWith("whsec_") ? secret.slice("whsec_".length) : undefined;
  const bytes = raw === undefined || raw === "" ? undefined : fromBase64(raw, { strict: false });
  if (bytes === undefined) {
    throw new ChannelError(
      "config_invalid",
      `${variable} must hold "whsec_<base64>" signing secrets (two separated by a space while rotating)`,
      { variable },
    );
  }
  return crypto.subtle.importKey("raw", bytes, { name: "HMAC", hash: "SHA-256" }, false, ["sign"]);
}

function keyError(variable: string, count: number, index: number, error: unknown): ChannelError {
  const which = count === 1 ? variable : `key ${index + 1} of ${count} in ${variable}`;
  const reason = error instanceof Error ? error.message : "cannot be imported";
  return new ChannelError(
    "config_invalid",
    `${which} ${reason}; ${variable} must hold "whsk_<base64>" Ed25519 keys (two separated by a space while rotating)`,
    { variable },
  );
}
