import { isChannelError } from "../../channel-error.js";
import type { Config } from "../config-schema.js";
import { parseInboundSecrets } from "../inbound-secrets.js";

/**
 * The shortest inbound or admin secret taken as strong. `webhook-channel secret` makes 43
 * characters (32 random bytes); 32 characters of base64url are still 192 bits, while anything
 * shorter is, in practice, typed by hand or copied from an example and can be guessed.
 */
export const MIN_SECRET_LENGTH = 32;

/**
 * Template text that example files and tutorials put where a secret goes, matched anywhere in
 * the value (case aside) so that a long template such as "replace-me-with-a-real-secret" counts
 * too. Each is 7 letters or more: a random secret holds one by chance about never.
 */
const TEMPLATE_TEXT = /replace[-_]?me|change[-_]?me|placeholder|example|your[-_]?secret/i;

/**
 * Whole values that are words, not secrets: the demo's `dev-secret` and what people type when
 * asked for a secret. All are shorter than MIN_SECRET_LENGTH; they are named so that the
 * message says "placeholder", the real problem, rather than only "too short".
 */
const PLACEHOLDER_WORDS: ReadonlySet<string> = new Set(["secret", "password", "test", "dev-secret", "token", "admin"]);

/**
 * Why a secret that authenticates requests to the service (a channel's inbound secret, the
 * admin secret) is too easy to guess, or undefined when it is not. The one rule behind both
 * `config check --preflight` (a problem) and the Node service's start (a warning). The
 * reason never quotes the value.
 */
export function weakSecretReason(secret: string): string | undefined {
  if (TEMPLATE_TEXT.test(secret) || PLACEHOLDER_WORDS.has(secret.toLowerCase())) {
    return "is a placeholder from an example, not a secret";
  }
  if (secret.length < MIN_SECRET_LENGTH) return `is shorter than ${MIN_SECRET_LENGTH} characters`;
  return undefined;
}

/** One weak secret the configuration uses, named by its variable and JSON path, never by value. */
export interface WeakSecret {
  /** JSON path of the key naming the variable: `channels[0].token_env` or `admin.token_env`. */
  readonly path: string;
  readonly variable: string;
  /** Which secret of the variable: the one it holds, or the new or old one of a rotation. */
  readonly which: "only" | "new" | "old";
  /** A sentence naming the variable and the reason, never the value. */
  readonly message: string;
}

/**
 * The weak secrets among the channels' inbound secrets (both while rotating) and the admin
 * secret, as `env` gives them (on Node, `NAME_FILE` files included). A variable that is unset,
 * unreadable or malformed is skipped: preflight and the start report those already.
 */
export function findWeakSecrets(config: Config, env: (name: string) => string | undefined): WeakSecret[] {
  const read = (name: string): string | undefined => {
    try {
      return env(name);
    } catch {
      // An unreadable file is reported by whoever reads it first, by name.
      return undefined;
    }
  };
  const found: WeakSecret[] = [];
  const check = (path: string, variable: string, secrets: readonly string[]): void => {
    for (const [index, secret] of secrets.entries()) {
      const reason = weakSecretReason(secret);
      if (reason === undefined) continue;
      const which = secrets.length === 1 ? "only" : index === 0 ? "new" : "old";
      const subject =
        which === "only"
          ? `the secret in ${variable}`
          : `the ${which === "new" ? "first (new)" : "second (old)"} of the two secrets in ${variable}`;
      found.push({ path, variable, which, message: `${subject} ${reason}` });
    }
  };
  for (const [index, channel] of config.channels.entries()) {
    const value = read(channel.token_env);
    if (value === undefined || value === "") continue;
    const secrets = parseInboundSecrets(value, channel.token_env);
    if (!isChannelError(secrets)) check(`channels[${index}].token_env`, channel.token_env, secrets);
  }
  const admin = config.admin?.token_env;
  const value = admin === undefined ? undefined : read(admin);
  if (admin !== undefined && value !== undefined && value !== "") check("admin.token_env", admin, [value]);
  return found;
}
