import { errorMessage, isChannelError } from "../../channel-error.js";
import { type ConfigProblem, formatJsonPath } from "../config-problem.js";
import type { Config } from "../config-schema.js";
import { parseInboundSecrets } from "../inbound-secrets.js";
import { findWeakSecrets } from "./weak-secret.js";

/**
 * Environment lookup, injected so the core never reads the process environment (or a file)
 * itself. It may throw when the value cannot be had, e.g. when the file a `<NAME>_FILE`
 * names cannot be read; the message names the variable and the file, never a value.
 */
export type EnvLookup = (name: string) => string | undefined;

/** Every `*_env` key of the configuration, at any depth, with its JSON path. */
export function envReferences(config: Config): { path: string; variable: string }[] {
  const found: { path: string; variable: string }[] = [];
  const walk = (value: unknown, path: PropertyKey[]): void => {
    if (Array.isArray(value)) {
      for (const [index, item] of value.entries()) walk(item, [...path, index]);
    } else if (value !== null && typeof value === "object") {
      for (const [key, child] of Object.entries(value)) {
        if (key.endsWith("_env") && typeof child === "string")
          found.push({ path: formatJsonPath([...path, key]), variable: child });
        else walk(child, [...path, key]);
      }
    }
  };
  walk(config, []);
  return found;
}

// Visible ASCII with inner spaces and tabs. HTTP allows Latin-1 bytes too, but runtimes read
// them differently (Node one character per byte, workerd as UTF-8), so a secret holding one
// would match a client's header on one runtime and not on the other.
const HEADER_SAFE = /^[\x21-\x7e](?:[\t\x20-\x7e]*[\x21-\x7e])?$/;

/**
 * Why a secret's value cannot be used as is, or undefined. Secrets travel in HTTP headers
 * (Bearer tokens, API keys) or are compared with one, so a trailing newline from a file or a
 * copy-paste would fail every request; it is refused up front instead. Never names the value.
 */
export function envValueProblem(value: string): string | undefined {
  if (HEADER_SAFE.test(value)) return undefined;
  return /^\s|\s$/.test(value)
    ? "starts or ends with whitespace (a trailing newline?)"
    : "contains characters an HTTP header cannot carry the same way on every runtime (control characters, or beyond ASCII)";
}

/** Why a URL held in a variable cannot be used as is (whitespace or a control character), or undefined. */
function urlValueProblem(value: string): string | undefined {
  if (/^\s|\s$/.test(value)) return "starts or ends with whitespace (a trailing newline?)";
  const control = [...value].some((char) => {
    const code = char.codePointAt(0) ?? 0;
    return code < 0x20 || code === 0x7f;
  });
  return control ? "contains control characters" : undefined;
}

/** The JSON path of a `webhook.tls` variable: PEM, checked by the Node loader instead. */
const TLS_VARIABLE = /^channels\[\d+\]\.webhook\.tls\./;

/** The JSON path of a channel's inbound secret, the one `*_env` key that may hold two secrets. */
const CHANNEL_TOKEN = /^channels\[\d+\]\.token_env$/;

/**
 * Confirms that every variable the configuration names resolves to a non-empty value that
 * can travel in an HTTP header (but the PEM texts of `webhook.tls`). Problems name the
 * variable, never its value.
 */
export function preflight(config: Config, env: EnvLookup): ConfigProblem[] {
  const problems: ConfigProblem[] = [];
  for (const { path, variable } of envReferences(config)) {
    let value: string | undefined;
    try {
      value = env(variable);
    } catch (error) {
      problems.push({
        path,
        message: errorMessage(error),
        fix: `make the file readable by the service, or set ${variable} itself`,
      });
      continue;
    }
    if (value === undefined || value === "") {
      problems.push({
        path,
        message: `environment variable ${variable} is ${value === undefined ? "not set" : "empty"}`,
        fix: fixForUnset(path, variable),
      });
      continue;
    }
    // PEM texts span lines and never travel in a header; their checks need a TLS library (Node's).
    // The database URL never travels in a header either: only a stray space or line break is refused.
    const problem = TLS_VARIABLE.test(path)
      ? undefined
      : path === "postgres_url_env"
        ? urlValueProblem(value)
        : envValueProblem(value);
    if (problem !== undefined) {
      problems.push({
        path,
        message: `environment variable ${variable} ${problem}`,
        fix: /^\s|\s$/.test(value)
          ? `export ${variable} again without surrounding whitespace or line breaks`
          : path === "postgres_url_env"
            ? `remove the control characters from the URL in ${variable}`
            : `give ${variable} printable ASCII only; for a secret of your own, a new one from \`webhook-channel secret\`, given to whoever sends or checks it as well`,
      });
      continue;
    }
    // A channel's inbound secret may be two, separated by one space, while it is rotated.
    const secrets = CHANNEL_TOKEN.test(path) ? parseInboundSecrets(value, variable) : undefined;
    if (isChannelError(secrets)) {
      problems.push({
        path,
        message: secrets.message,
        fix: `export ${variable} again as one secret, or as the new and the old secret separated by one space while rotating`,
      });
    }
  }
  const shared = adminSecretSharedProblem(config, env);
  if (shared !== undefined) problems.push(shared);
  return problems;
}

/**
 * The channels' inbound secrets (both while rotating) and the admin secret that are too easy
 * to guess (`weakSecretReason`): for `config check --preflight`, which exits 1 on them. Apart
 * from `preflight` because the Worker refuses to serve on its admin-secret problems, and a weak
 * secret must not stop a service (Node only warns at start: the demo's `dev-secret`).
 */
export function weakSecretProblems(config: Config, env: EnvLookup): ConfigProblem[] {
  return findWeakSecrets(config, env).map(({ path, variable, which, message }) => ({
    path,
    message,
    fix:
      which === "old"
        ? `finish the rotation: once every client sends the new secret, export ${variable} with the new secret alone`
        : which === "new"
          ? `make the new secret with npx webhook-channel secret and export ${variable}="<new> <old>"`
          : fixForUnset(path, variable),
  }));
}

/**
 * The admin secret may not be a channel's: whoever holds a channel secret (every client of
 * that channel) would otherwise read, replay and delete every channel's dead letters.
 */
function adminSecretSharedProblem(config: Config, env: EnvLookup): ConfigProblem | undefined {
  const variable = config.admin?.token_env;
  if (variable === undefined) return undefined;
  const read = (name: string): string | undefined => {
    try {
      return env(name);
    } catch {
      // Unreadable variables are reported above, by name.
      return undefined;
    }
  };
  const admin = read(variable);
  if (admin === undefined || admin === "") return undefined;
  for (const channel of config.channels) {
    const value = read(channel.token_env);
    const secrets = value === undefined ? undefined : parseInboundSecrets(value, channel.token_env);
    if (secrets === undefined || isChannelError(secrets) || !secrets.includes(admin)) continue;
    return {
      path: "admin.token_env",
      message: `environment variable ${variable} holds the same secret as ${channel.token_env}, a channel's inbound secret`,
      fix: `export ${variable}="$(npx webhook-channel secret)" (a new secret, known to operators only)`,
    };
  }
  return undefined;
}

/**
 * How to set a variable, by what its key (the last part of `path`) holds: only a channel's inbound secret is ours to
 * make (`webhook-channel secret`); an API key or a receiver's token comes from elsewhere, and a
 * signing secret has the `whsec_` form. `npx` because in a clone the bin is not on PATH.
 */
export function fixForUnset(path: string, variable: string): string {
  if (CHANNEL_TOKEN.test(path)) {
    return `export ${variable}="$(npx webhook-channel secret)" (a new inbound secret; give the same value to the clients)`;
  }
  if (path === "admin.token_env") {
    return `export ${variable}="$(npx webhook-channel secret)" (a new admin secret, not any channel's)`;
  }
  const key = path.slice(path.lastIndexOf(".") + 1);
  switch (key) {
    case "api_key_env":
      return `export ${variable}=<the API key from your model provider> (local servers that need no key: remove "api_key_env")`;
    case "signing_secret_env":
      return `export ${variable}="whsec_$(openssl rand -base64 32)" and give the receiver the same value`;
    case "signing_key_env":
      return `export ${variable}="$(npx webhook-channel keypair)" and give the receiver the whpk_ public key it prints`;
    case "outbound_token_env":
      return `export ${variable}=<the token your receiver expects>`;
    case "token_env":
      return `export ${variable}=<the token your bot expects>`;
    case "client_cert_env":
    case "client_key_env":
    case "ca_env":
      return `export ${variable}="$(cat <file>.pem)", or ${variable}_FILE=<file>.pem (read as the service reads it)`;
    case "postgres_url_env":
      return `export ${variable}="postgres://<user>:<password>@<host>:5432/<database>?sslmode=verify-full"`;
    default:
      return `export ${variable}=<value>`;
  }
}

/**
 * What the value of an unset variable is, in words, by its key as in {@link fixForUnset}: for a
 * runtime whose secrets are not exported in a shell (a Worker's `wrangler secret put`).
 */
export function valueForUnset(path: string): string {
  if (CHANNEL_TOKEN.test(path)) return "a new inbound secret (npx webhook-channel secret makes one), the clients' too";
  if (path === "admin.token_env") return "a new admin secret (npx webhook-channel secret makes one), no channel's";
  switch (path.slice(path.lastIndexOf(".") + 1)) {
    case "api_key_env":
      return "the API key from your model provider";
    case "signing_secret_env":
      return 'whsec_ and 32 random bytes in base64 ("whsec_$(openssl rand -base64 32)"), the receiver\'s too';
    case "signing_key_env":
      return "the whsk_ key npx webhook-channel keypair prints; the receiver gets its whpk_ public key";
    case "outbound_token_env":
      return "the token your receiver expects";
    case "token_env":
      return "the token your bot expects";
    default:
      return "its value";
  }
}
