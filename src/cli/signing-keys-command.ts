import { parseArgs } from "node:util";
import { errorMessage } from "../core/channel-error.js";
import { ENV_NAME } from "../core/config/schema-parts.js";
import { signingValues } from "../core/outbound/reply-signer.js";
import { generateSigningKeyPair, importSigningKey } from "../core/outbound/signing-key.js";
import { createSecretEnv } from "../node/secret-env.js";
import type { CliIo } from "./cli-io.js";

/** The variable `public-key` reads when `--env` is not given: the one the docs name for signing_key_env. */
export const DEFAULT_SIGNING_KEY_ENV = "WEBHOOK_SIGNING_KEY";

/**
 * `keypair`: a new Ed25519 key pair. The `whsk_` secret key alone goes to stdout, so that
 * `export WEBHOOK_SIGNING_KEY="$(npx webhook-channel keypair)"` captures it and nothing else;
 * the `whpk_` public key, which is no secret and goes to the receiver, is shown on stderr.
 */
export async function runKeypair(args: readonly string[], io: CliIo): Promise<number> {
  parseArgs({ args: [...args], options: {}, strict: true, allowPositionals: false });
  const { secretKey, publicKey } = await generateSigningKeyPair();
  io.out(`${secretKey}\n`);
  io.err(`public key (give it to the receiver; it verifies v1a signatures): ${publicKey}\n`);
  return 0;
}

/**
 * `public-key [--env <NAME>]`: the `whpk_` public key of each `whsk_` key the variable holds
 * (its `<NAME>_FILE` too, as the service reads it), one per line, in the variable's order:
 * what to give receivers again, or both keys' during a rotation. Exit 1 when the variable is
 * unset or a key is unusable; never prints the secret key.
 */
export async function runPublicKey(args: readonly string[], io: CliIo): Promise<number> {
  const { values } = parseArgs({
    args: [...args],
    options: { env: { type: "string", default: DEFAULT_SIGNING_KEY_ENV } },
    strict: true,
    allowPositionals: false,
  });
  const variable = values.env;
  if (!ENV_NAME.test(variable)) {
    io.err(
      `webhook-channel: --env ${JSON.stringify(variable)} is not a variable's name: letters, digits and "_", not starting with a digit\n`,
    );
    return 2;
  }
  let value: string | undefined;
  try {
    value = createSecretEnv(io.env)(variable);
  } catch (error) {
    io.err(`webhook-channel: ${errorMessage(error)}\n`);
    return 1;
  }
  if (value === undefined || value.trim() === "") {
    io.err(
      `webhook-channel: ${variable} is not set: export it (or ${variable}_FILE) with the whsk_ key, or make a new pair with npx webhook-channel keypair\n`,
    );
    return 1;
  }
  let keys: string[];
  try {
    keys = signingValues(value, variable);
  } catch (error) {
    io.err(`webhook-channel: ${errorMessage(error)}\n`);
    return 1;
  }
  const publicKeys: string[] = [];
  for (const [index, key] of keys.entries()) {
    try {
      publicKeys.push((await importSigningKey(key)).publicKey);
    } catch (error) {
      const which = keys.length === 1 ? variable : `key ${index + 1} of ${keys.length} in ${variable}`;
      io.err(`webhook-channel: ${which} ${errorMessage(error)}\n`);
      return 1;
    }
  }
  io.out(publicKeys.map((key) => `${key}\n`).join(""));
  return 0;
}
